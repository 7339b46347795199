// The proxy between a real gRPC client and a CRI server over unix sockets: what kubelet sends
// arrives unchanged (metadata, deadline, both CRI versions, streams, methods it does not know),
// what the runtime answers comes back unchanged, errors included, and hooks see hooked calls.
#include <grpcpp/create_channel.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/security/credentials.h>
#include <grpcpp/support/byte_buffer.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <fstream>
#include <mutex>
#include <thread>

#include "cri/call_interceptor.h"
#include "cri/cri_proxy_server.h"
#include "cri/runtime/v1/api.grpc.pb.h"
#include "cri/runtime/v1alpha2/api.grpc.pb.h"
#include "koord/app/role_app.h"
#include "koord/core/metrics.h"
#include "test_cri_backend.h"

using namespace koord::roles::runtime_proxy;
using proxy_test::dial;
using proxy_test::Sockets;
using proxy_test::TestCriBackend;
using namespace std::chrono_literals;

namespace {

// A runtime behind a started proxy with no hooks.
struct Running {
  Sockets sockets;
  TestCriBackend backend{sockets.runtime, sockets.image};
  CriProxyServer proxy{sockets.config(), nullptr};
  Running() { proxy.start(); }
};

void withDeadline(grpc::ClientContext& ctx, std::chrono::milliseconds d) {
  ctx.set_deadline(std::chrono::system_clock::now() + d);
}

}  // namespace

TEST_CASE("runtime-proxy: unary calls of both CRI versions reach the runtime as sent",
          "[runtime-proxy]") {
  Running r;
  const Sockets& s = r.sockets;
  TestCriBackend& backend = r.backend;
  auto v1 = runtime::v1::RuntimeService::NewStub(dial(s.proxy));
  auto v1alpha2 = runtime::v1alpha2::RuntimeService::NewStub(dial(s.proxy));

  {
    grpc::ClientContext ctx;
    ctx.AddMetadata("x-test", "from-kubelet");
    withDeadline(ctx, 5s);
    runtime::v1::VersionRequest req;
    req.set_version("0.1.0");
    runtime::v1::VersionResponse resp;
    auto st = v1->Version(&ctx, req, &resp);
    REQUIRE(st.ok());
    CHECK(resp.version() == "0.1.0");
    CHECK(resp.runtime_name() == "test-runtime v1");
    // The runtime saw kubelet's metadata and (nearly all of) its deadline.
    CHECK_THAT(resp.runtime_version(), Catch::StartsWith("x-test=from-kubelet;deadline-ms="));
    const int left =
        std::stoi(resp.runtime_version().substr(resp.runtime_version().find('=', 8) + 1));
    CHECK(left > 1000);
    CHECK(left <= 5000);
  }
  {
    grpc::ClientContext ctx;
    runtime::v1alpha2::VersionRequest req;
    req.set_version("v1alpha2");
    runtime::v1alpha2::VersionResponse resp;
    REQUIRE(v1alpha2->Version(&ctx, req, &resp).ok());
    CHECK(resp.version() == "v1alpha2");
    CHECK(resp.runtime_name() == "test-runtime v1alpha2");
    CHECK(resp.runtime_version().empty());  // no metadata, no deadline
  }
  CHECK(backend.runtimeCalls() == 2);
}

TEST_CASE("runtime-proxy: the runtime's errors reach kubelet unchanged", "[runtime-proxy]") {
  Running r;
  const Sockets& s = r.sockets;
  auto v1 = runtime::v1::RuntimeService::NewStub(dial(s.proxy));
  grpc::ClientContext ctx;
  runtime::v1::ContainerStatusRequest req;
  req.set_container_id("abc");
  runtime::v1::ContainerStatusResponse resp;
  auto st = v1->ContainerStatus(&ctx, req, &resp);
  CHECK(st.error_code() == grpc::StatusCode::NOT_FOUND);
  CHECK(st.error_message() == "an error occurred when try to find container \"abc\": not found");
}

TEST_CASE("runtime-proxy: image calls go to the image socket", "[runtime-proxy]") {
  Running r;
  const Sockets& s = r.sockets;
  TestCriBackend& backend = r.backend;
  {
    auto images = runtime::v1::ImageService::NewStub(dial(s.proxy));
    grpc::ClientContext ctx;
    runtime::v1::ListImagesResponse resp;
    REQUIRE(images->ListImages(&ctx, runtime::v1::ListImagesRequest(), &resp).ok());
    REQUIRE(resp.images_size() == 1);
    CHECK(resp.images(0).id() == "sha256:from-the-image-socket");
  }
  {
    auto images = runtime::v1alpha2::ImageService::NewStub(dial(s.proxy));
    grpc::ClientContext ctx;
    runtime::v1alpha2::ListImagesResponse resp;
    REQUIRE(images->ListImages(&ctx, runtime::v1alpha2::ListImagesRequest(), &resp).ok());
    REQUIRE(resp.images_size() == 1);
    CHECK(resp.images(0).id() == "sha256:v1alpha2-from-the-image-socket");
  }
  CHECK(backend.runtimeCalls() == 0);
}

TEST_CASE("runtime-proxy: large answers pass, and the limit is kubelet's own", "[runtime-proxy]") {
  Running r;
  const Sockets& s = r.sockets;
  auto list = [&](std::shared_ptr<grpc::Channel> channel, int count,
                  runtime::v1::ListContainersResponse& resp) {
    grpc::ClientContext ctx;
    withDeadline(ctx, 20s);
    runtime::v1::ListContainersRequest req;
    (*req.mutable_filter()->mutable_label_selector())["count"] = std::to_string(count);
    return runtime::v1::RuntimeService::NewStub(channel)->ListContainers(&ctx, req, &resp);
  };
  const auto roomy = dial(s.proxy);
  runtime::v1::ListContainersResponse resp;
  REQUIRE(list(roomy, 8000, resp).ok());  // about 8.5 MB
  CHECK(resp.containers_size() == 8000);
  CHECK(resp.containers(7999).id() == "c7999");
  // The proxy adds no limit of its own: 21 MB reach a client that takes them ...
  runtime::v1::ListContainersResponse big;
  REQUIRE(list(roomy, 20000, big).ok());
  CHECK(big.containers(19999).id() == "c19999");
  // ... and a client with kubelet's 16 MiB limit refuses them itself.
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(16 << 20);
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  const auto kubelet_like =
      grpc::CreateCustomChannel("unix:" + s.proxy, grpc::InsecureChannelCredentials(), args);
  runtime::v1::ListContainersResponse too_big;
  CHECK(list(kubelet_like, 20000, too_big).error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED);
}

TEST_CASE("runtime-proxy: a server stream is pumped message by message with its status",
          "[runtime-proxy]") {
  Running r;
  const Sockets& s = r.sockets;
  auto v1 = runtime::v1::RuntimeService::NewStub(dial(s.proxy));
  grpc::ClientContext ctx;
  withDeadline(ctx, 10s);
  auto reader = v1->GetContainerEvents(&ctx, runtime::v1::GetEventsRequest());
  runtime::v1::ContainerEventResponse e;
  std::vector<std::string> ids;
  while (reader->Read(&e))
    ids.push_back(e.container_id());
  auto st = reader->Finish();
  CHECK(ids == std::vector<std::string>{"c0", "c1", "c2"});
  CHECK(st.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED);
  CHECK(st.error_message() == "three is all");
}

TEST_CASE("runtime-proxy: a method the proxy does not know is the runtime's to answer",
          "[runtime-proxy]") {
  Sockets s;
  auto backend = std::make_unique<TestCriBackend>(s.runtime, s.image);
  CriProxyServer proxy(s.config(), nullptr);
  proxy.start();
  grpc::GenericStub generic(dial(s.proxy));
  auto call = [&](const std::string& method) {
    grpc::ClientContext ctx;
    withDeadline(ctx, 3s);
    grpc::Slice empty(std::string{});  // an empty message, as an empty request encodes
    grpc::ByteBuffer req(&empty, 1);
    grpc::ByteBuffer resp;
    std::mutex mu;
    std::condition_variable cv;
    bool done = false;
    grpc::Status status;
    generic.UnaryCall(&ctx, method, grpc::StubOptions(), &req, &resp, [&](grpc::Status st) {
      std::lock_guard lock(mu);
      status = std::move(st);
      done = true;
      cv.notify_one();
    });
    std::unique_lock lock(mu);
    cv.wait(lock, [&] { return done; });
    return status;
  };
  // The test runtime answers UNIMPLEMENTED for a method it lacks: the proxy forwarded it.
  CHECK(call("/runtime.v1.RuntimeService/SomethingNew").error_code() ==
        grpc::StatusCode::UNIMPLEMENTED);
  CHECK(call("/grpc.health.v1.Health/Check").error_code() == grpc::StatusCode::UNIMPLEMENTED);
  // With no runtime behind it, the same call cannot be answered at all.
  backend.reset();
  CHECK(call("/runtime.v1.RuntimeService/SomethingNew").error_code() ==
        grpc::StatusCode::UNAVAILABLE);
}

TEST_CASE("runtime-proxy: a runtime that is down answers UNAVAILABLE until it is back",
          "[runtime-proxy]") {
  Sockets s;
  CriProxyServer proxy(s.config(), nullptr);
  proxy.start();
  auto v1 = runtime::v1::RuntimeService::NewStub(dial(s.proxy));
  auto version = [&] {
    grpc::ClientContext ctx;
    withDeadline(ctx, 2s);
    runtime::v1::VersionResponse resp;
    return v1->Version(&ctx, runtime::v1::VersionRequest(), &resp).error_code();
  };
  CHECK(version() == grpc::StatusCode::UNAVAILABLE);
  TestCriBackend backend(s.runtime, s.image);
  // Reconnect backoff is capped at a second.
  grpc::StatusCode code = grpc::StatusCode::UNKNOWN;
  for (int i = 0; i < 30 && code != grpc::StatusCode::OK; ++i) {
    code = version();
    if (code != grpc::StatusCode::OK)
      std::this_thread::sleep_for(200ms);
  }
  CHECK(code == grpc::StatusCode::OK);
}

TEST_CASE("runtime-proxy: the listening socket: stale replaced and live or foreign refused",
          "[runtime-proxy]") {
  Sockets s;
  TestCriBackend backend(s.runtime, s.image);
  {
    CriProxyServer first(s.config(), nullptr);
    first.start();
    // A second proxy must not take the socket from a live one.
    CriProxyServer second(s.config(), nullptr);
    CHECK_THROWS_WITH(second.start(), Catch::Contains("another process is serving"));
    // The first still answers.
    auto v1 = runtime::v1::RuntimeService::NewStub(dial(s.proxy));
    grpc::ClientContext ctx;
    runtime::v1::VersionResponse resp;
    CHECK(v1->Version(&ctx, runtime::v1::VersionRequest(), &resp).ok());
  }
  // A socket file nobody serves (a proxy that was killed) is replaced.
  {
    const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, s.proxy.c_str(), sizeof addr.sun_path - 1);
    REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
    ::close(fd);
    CriProxyServer again(s.config(), nullptr);
    again.start();
    auto v1 = runtime::v1::RuntimeService::NewStub(dial(s.proxy));
    grpc::ClientContext ctx;
    runtime::v1::VersionResponse resp;
    CHECK(v1->Version(&ctx, runtime::v1::VersionRequest(), &resp).ok());
  }
  // Anything else at the path is left alone.
  {
    std::ofstream(s.proxy) << "not a socket";
    CriProxyServer blocked(s.config(), nullptr);
    CHECK_THROWS_AS(blocked.start(), koord::app::ConfigError);
    std::ifstream in(s.proxy);
    std::string content;
    std::getline(in, content);
    CHECK(content == "not a socket");
  }
}

namespace {

// Rewrites RunPodSandbox's cgroup parent, or refuses the call, and records what came after.
class TestInterceptor final : public CallInterceptor {
 public:
  std::atomic<bool> refuse{false};
  std::string cgroup_parent = "/kubepods/besteffort/rewritten";
  std::mutex mu;
  std::vector<std::string> log;

  void before(const CriMethod& method, std::string& request, std::any&,
              std::function<void(const grpc::Status&)> done) override {
    {
      std::lock_guard lock(mu);
      log.push_back("before " + std::string(hookedCallName(method.hooked)));
    }
    if (refuse) {
      done(grpc::Status(grpc::StatusCode::FAILED_PRECONDITION, "hook says no"));
      return;
    }
    runtime::v1::RunPodSandboxRequest req;
    REQUIRE(req.ParseFromString(request));
    req.mutable_config()->mutable_linux()->set_cgroup_parent(cgroup_parent);
    request = req.SerializeAsString();
    // From another thread, as a hook server's answer would come.
    std::thread([done = std::move(done)] { done(grpc::Status::OK); }).detach();
  }
  void after(const CriMethod& method, const std::string&, const std::string& response,
             std::any&) override {
    std::lock_guard lock(mu);
    log.push_back("after " + std::string(hookedCallName(method.hooked)) + " " +
                  std::to_string(response.size()));
  }
};

// How many hooked calls koord_runtime_proxy_hook_duration_seconds has counted (0 before the
// first): the histogram is process-wide, so tests compare before and after.
std::uint64_t hookCount(std::string_view call, std::string_view result) {
  const std::string text = koord::metrics::Registry::global().render();
  const std::string key =
      fmt::format("koord_runtime_proxy_hook_duration_seconds_count{{call=\"{}\",result=\"{}\"}} ",
                  call, result);
  const auto at = text.find(key);
  if (at == std::string::npos)
    return 0;
  return std::stoull(text.substr(at + key.size()));
}

}  // namespace

TEST_CASE("runtime-proxy: hooked calls go through the interceptor and others do not",
          "[runtime-proxy]") {
  Sockets s;
  TestCriBackend backend(s.runtime, s.image);
  TestInterceptor interceptor;
  CriProxyServer proxy(s.config(), &interceptor);
  proxy.start();
  auto v1 = runtime::v1::RuntimeService::NewStub(dial(s.proxy));
  const auto ok_before = hookCount("RunPodSandbox", "ok");
  const auto failed_before = hookCount("RunPodSandbox", "failed");
  runtime::v1::RunPodSandboxRequest req;
  req.mutable_config()->mutable_metadata()->set_name("pod-a");
  req.mutable_config()->mutable_linux()->set_cgroup_parent("/kubepods/besteffort/pod-a");
  auto logged = [&](std::size_t n) {
    // after() runs before kubelet has its answer; the wait only guards against a slow machine.
    for (int i = 0; i < 100; ++i) {
      {
        std::lock_guard lock(interceptor.mu);
        if (interceptor.log.size() >= n)
          return interceptor.log;
      }
      std::this_thread::sleep_for(20ms);
    }
    std::lock_guard lock(interceptor.mu);
    return interceptor.log;
  };
  {
    grpc::ClientContext ctx;
    runtime::v1::RunPodSandboxResponse resp;
    REQUIRE(v1->RunPodSandbox(&ctx, req, &resp).ok());
    CHECK(resp.pod_sandbox_id() == "pod-a|/kubepods/besteffort/rewritten");
  }
  auto log = logged(2);
  REQUIRE(log.size() == 2);
  CHECK(log[0] == "before RunPodSandbox");
  CHECK_THAT(log[1], Catch::StartsWith("after RunPodSandbox "));
  {
    grpc::ClientContext ctx;
    runtime::v1::VersionResponse resp;
    REQUIRE(v1->Version(&ctx, runtime::v1::VersionRequest(), &resp).ok());
  }
  const int calls = backend.runtimeCalls();
  interceptor.refuse = true;
  {
    grpc::ClientContext ctx;
    runtime::v1::RunPodSandboxResponse resp;
    auto st = v1->RunPodSandbox(&ctx, req, &resp);
    CHECK(st.error_code() == grpc::StatusCode::FAILED_PRECONDITION);
    CHECK(st.error_message() == "hook says no");
  }
  CHECK(backend.runtimeCalls() == calls);  // a refused call never reaches the runtime
  // Version was not hooked, and a refused call has no after().
  std::this_thread::sleep_for(100ms);
  log = logged(3);
  REQUIRE(log.size() == 3);
  CHECK(log[2] == "before RunPodSandbox");
  // Each hooked call's time in its pre hooks is measured, by result; Version's is not.
  CHECK(hookCount("RunPodSandbox", "ok") == ok_before + 1);
  CHECK(hookCount("RunPodSandbox", "failed") == failed_before + 1);
}
