// The HTTP/2 relay under load and abuse, over real gRPC on unix sockets: many calls at once on
// one connection with hooks that lengthen requests (flow control across the rewrite), a hooked
// request longer than a stream's window, a client that is not HTTP/2, and one connection
// carrying calls for two sockets.
#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "cri/call_interceptor.h"
#include "cri/cri_proxy_server.h"
#include "cri/runtime/v1/api.grpc.pb.h"
#include "test_cri_backend.h"

using namespace koord::roles::runtime_proxy;
using proxy_test::Sockets;
using proxy_test::TestCriBackend;
using namespace std::chrono_literals;

namespace {

// A connection of its own (gRPC C++ shares connections between channels to one target).
std::shared_ptr<grpc::Channel> ownConnection(const std::string& socket) {
  return proxy_test::dial(socket, true);
}

// Sets RunPodSandbox's cgroup parent to `grow` bytes more than it was, answering from another
// thread as a hook server would.
class GrowingInterceptor final : public CallInterceptor {
 public:
  explicit GrowingInterceptor(std::size_t grow) : grow_(grow) {}
  std::atomic<int> befores{0};
  std::atomic<int> afters{0};

  void before(const CriMethod&, std::string& request, std::any&,
              std::function<void(const grpc::Status&)> done) override {
    ++befores;
    runtime::v1::RunPodSandboxRequest req;
    if (!req.ParseFromString(request)) {
      done(grpc::Status(grpc::StatusCode::INTERNAL, "test: request does not parse"));
      return;
    }
    auto* lin = req.mutable_config()->mutable_linux();
    lin->set_cgroup_parent(lin->cgroup_parent() + std::string(grow_, 'g'));
    request = req.SerializeAsString();
    std::thread([done = std::move(done)] { done(grpc::Status::OK); }).detach();
  }
  void after(const CriMethod&, const std::string&, const std::string&, std::any&) override {
    ++afters;
  }

 private:
  std::size_t grow_;
};

}  // namespace

TEST_CASE("runtime-proxy relay: many calls at once on one connection, hooks lengthening requests",
          "[runtime-proxy]") {
  Sockets s;
  TestCriBackend backend(s.runtime, s.image);
  // 3 KB more per hooked request: 400 of them owe the runtime far more than its 64 KiB
  // connection window, so what kubelet is told must follow what the runtime grants.
  GrowingInterceptor interceptor(3000);
  CriProxyServer proxy({s.proxy, s.runtime, s.runtime}, &interceptor);
  proxy.start();
  auto v1 = runtime::v1::RuntimeService::NewStub(ownConnection(s.proxy));
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) {
        const std::string name = "pod-" + std::to_string(t) + "-" + std::to_string(i);
        grpc::ClientContext run_ctx;
        run_ctx.set_deadline(std::chrono::system_clock::now() + 20s);
        runtime::v1::RunPodSandboxRequest run;
        run.mutable_config()->mutable_metadata()->set_name(name);
        run.mutable_config()->mutable_linux()->set_cgroup_parent("/kubepods/" + name);
        runtime::v1::RunPodSandboxResponse ran;
        auto st = v1->RunPodSandbox(&run_ctx, run, &ran);
        if (!st.ok() ||
            ran.pod_sandbox_id() != name + "|/kubepods/" + name + std::string(3000, 'g'))
          ++failures;
        // And a call that is not hooked, with a large answer (about 20 KB), between them.
        grpc::ClientContext list_ctx;
        list_ctx.set_deadline(std::chrono::system_clock::now() + 20s);
        runtime::v1::ListContainersRequest list;
        (*list.mutable_filter()->mutable_label_selector())["count"] = "20";
        runtime::v1::ListContainersResponse listed;
        st = v1->ListContainers(&list_ctx, list, &listed);
        if (!st.ok() || listed.containers_size() != 20)
          ++failures;
      }
    });
  for (auto& t : threads)
    t.join();
  CHECK(failures.load() == 0);
  CHECK(interceptor.befores.load() == 400);
  CHECK(interceptor.afters.load() == 400);
  CHECK(backend.runtimeCalls() == 800);
}

TEST_CASE("runtime-proxy relay: a hooked request longer than a stream's window",
          "[runtime-proxy]") {
  Sockets s;
  TestCriBackend backend(s.runtime, s.image);
  GrowingInterceptor interceptor(10);
  CriProxyServer proxy({s.proxy, s.runtime, s.runtime}, &interceptor);
  proxy.start();
  auto v1 = runtime::v1::RuntimeService::NewStub(ownConnection(s.proxy));
  // A pod with 300 KB of annotations (a last-applied-configuration, say): kubelet can send it
  // only as the proxy, holding it for the hook, gives the window back.
  runtime::v1::RunPodSandboxRequest run;
  run.mutable_config()->mutable_metadata()->set_name("big");
  run.mutable_config()->mutable_linux()->set_cgroup_parent("/kubepods/big");
  (*run.mutable_config()->mutable_annotations())["blob"] = std::string(300000, 'a');
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + 10s);
  runtime::v1::RunPodSandboxResponse ran;
  const auto st = v1->RunPodSandbox(&ctx, run, &ran);
  REQUIRE(st.ok());
  CHECK(ran.pod_sandbox_id() == "big|/kubepods/big" + std::string(10, 'g'));
}

TEST_CASE("runtime-proxy relay: a client that is not HTTP/2 is cut off, others go on",
          "[runtime-proxy]") {
  Sockets s;
  TestCriBackend backend(s.runtime, s.image);
  CriProxyServer proxy({s.proxy, s.runtime, s.runtime}, nullptr);
  proxy.start();
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, s.proxy.c_str(), sizeof addr.sun_path - 1);
  REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  const std::string http1 = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
  REQUIRE(::write(fd, http1.data(), http1.size()) == static_cast<ssize_t>(http1.size()));
  // At most the proxy's preface (a SETTINGS frame with its limits), then the end of the
  // connection (not the 5 s read timeout).
  timeval timeout{5, 0};
  REQUIRE(::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout) == 0);
  std::string got;
  char buf[256];
  ssize_t n = 0;
  while ((n = ::read(fd, buf, sizeof buf)) > 0)
    got.append(buf, static_cast<std::size_t>(n));
  ::close(fd);
  CHECK(n == 0);
  CHECK(std::string("\0\0\x0c\x04\0\0\0\0\0"
                    "\0\x03\0\0\x04\0"
                    "\0\x06\0\x10\0\0",
                    21)
            .starts_with(got));
  auto v1 = runtime::v1::RuntimeService::NewStub(ownConnection(s.proxy));
  grpc::ClientContext ctx;
  runtime::v1::VersionResponse resp;
  CHECK(v1->Version(&ctx, runtime::v1::VersionRequest(), &resp).ok());
}

TEST_CASE("runtime-proxy relay: one connection, calls for two sockets", "[runtime-proxy]") {
  Sockets s;
  TestCriBackend backend(s.runtime, s.image);
  CriProxyServer proxy({s.proxy, s.runtime, s.image}, nullptr);
  proxy.start();
  const auto channel = ownConnection(s.proxy);
  auto runtime_stub = runtime::v1::RuntimeService::NewStub(channel);
  auto image_stub = runtime::v1::ImageService::NewStub(channel);
  {
    grpc::ClientContext ctx;
    runtime::v1::VersionResponse resp;
    REQUIRE(runtime_stub->Version(&ctx, runtime::v1::VersionRequest(), &resp).ok());
  }
  // kubelet and crictl dial the image service separately; a client that mixes them on one
  // connection is told so, by name, and its connection goes on serving the runtime.
  {
    grpc::ClientContext ctx;
    runtime::v1::ListImagesResponse resp;
    const auto st = image_stub->ListImages(&ctx, runtime::v1::ListImagesRequest(), &resp);
    CHECK(st.error_code() == grpc::StatusCode::UNIMPLEMENTED);
    CHECK_THAT(st.error_message(),
               Catch::Contains("need a connection of their own") && Catch::Contains(s.image));
  }
  {
    grpc::ClientContext ctx;
    runtime::v1::VersionResponse resp;
    CHECK(runtime_stub->Version(&ctx, runtime::v1::VersionRequest(), &resp).ok());
  }
  // The same call on a connection of its own reaches the image socket.
  auto images = runtime::v1::ImageService::NewStub(ownConnection(s.proxy));
  grpc::ClientContext ctx;
  runtime::v1::ListImagesResponse resp;
  REQUIRE(images->ListImages(&ctx, runtime::v1::ListImagesRequest(), &resp).ok());
  CHECK(resp.images(0).id() == "sha256:from-the-image-socket");
}
