// koord's gRPC unary client and server (the runtime hooks' transport) against each other and
// against grpc++ (and a grpc-go client, containerd's ctr) on real unix sockets: answers, error
// statuses, deadlines, a server that is not there or restarts, messages larger than a
// flow-control window, and a peer that is not HTTP/2.
#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server.h>
#include <grpcpp/server_builder.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <memory>
#include <optional>
#include <thread>

#include "grpc_callback_hold.h"
#include "koord/h2/grpc_unary_client.h"
#include "koord/h2/grpc_unary_server.h"
#include "koordinator/runtime/v1alpha1/api.grpc.pb.h"
#include "temp_tree.h"

using namespace std::chrono_literals;
using koord::h2::GrpcCode;
using koord::h2::GrpcStatus;
using koord::h2::GrpcUnaryClient;
using koord::h2::GrpcUnaryServer;
using koord::testing::TempTree;
namespace hookapi = ::runtime::v1alpha1;

namespace {

const std::string kPodHook = "/runtime.v1alpha1.RuntimeHookService/PreRunPodSandboxHook";
const std::string kContainerHook = "/runtime.v1alpha1.RuntimeHookService/PreCreateContainerHook";

// The answer both servers give: the pod's name back, and as much padding as asked for.
hookapi::PodSandboxHookResponse answerFor(const hookapi::PodSandboxHookRequest& req) {
  hookapi::PodSandboxHookResponse resp;
  (*resp.mutable_annotations())["name"] = req.pod_meta().name();
  if (auto pad = req.labels().find("pad"); pad != req.labels().end())
    (*resp.mutable_annotations())["pad"] = std::string(std::stoul(pad->second), 'p');
  resp.set_cgroup_parent("/kubepods/besteffort/" + req.pod_meta().uid());
  return resp;
}

// koord's server, as the koordlet runs it: the pod hook answers, names starting "fail" get an
// error, "hang" waits (the server's one thread) for as long as the test says.
struct KoordServer {
  GrpcUnaryServer server;
  std::atomic<int> hang_ms{0};
  explicit KoordServer(const std::string& socket) {
    server.addMethod(kPodHook, [this](std::string_view bytes, std::string& out) -> GrpcStatus {
      hookapi::PodSandboxHookRequest req;
      if (!req.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
        return {GrpcCode::kInvalidArgument, "does not parse"};
      if (req.pod_meta().name().starts_with("fail"))
        return {GrpcCode::kInternal, "no: 100% \"refused\"\nsecond line \xc3\xa9"};
      if (req.pod_meta().name() == "hang")
        std::this_thread::sleep_for(std::chrono::milliseconds(hang_ms.load()));
      out = answerFor(req).SerializeAsString();
      return {};
    });
    server.start(socket);
  }
};

class GrpcppHooks final : public hookapi::RuntimeHookService::Service {
 public:
  grpc::Status PreRunPodSandboxHook(grpc::ServerContext* ctx,
                                    const hookapi::PodSandboxHookRequest* req,
                                    hookapi::PodSandboxHookResponse* resp) override {
    if (req->pod_meta().name().starts_with("fail"))
      return grpc::Status(grpc::StatusCode::PERMISSION_DENIED, "no: 100% \"refused\"");
    if (req->pod_meta().name() == "hang") {
      while (!ctx->IsCancelled())
        std::this_thread::sleep_for(5ms);
      return grpc::Status(grpc::StatusCode::CANCELLED, "gave up");
    }
    *resp = answerFor(*req);
    return grpc::Status::OK;
  }
};

struct GrpcppServer {
  GrpcppHooks hooks;
  std::unique_ptr<grpc::Server> server;
  explicit GrpcppServer(const std::string& socket) {
    grpc::ServerBuilder b;
    b.AddListeningPort("unix:" + socket, grpc::InsecureServerCredentials());
    b.RegisterService(&hooks);
    server = b.BuildAndStart();
    REQUIRE(server);
  }
  ~GrpcppServer() {
    server->Shutdown(std::chrono::system_clock::now() + 100ms);
    server->Wait();
  }
};

// koord's client on an io_context thread of its own, as the relay runs it.
struct KoordClient {
  boost::asio::io_context io{1};
  std::optional<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> work{
      io.get_executor()};
  std::thread thread{[this] { io.run(); }};
  std::unique_ptr<GrpcUnaryClient> client;

  explicit KoordClient(const std::string& socket) {
    onIo([&] { client = std::make_unique<GrpcUnaryClient>(io, socket); });
  }
  ~KoordClient() {
    onIo([&] { client.reset(); });
    work.reset();
    thread.join();
  }
  template <typename F>
  void onIo(F f) {
    std::promise<void> done;
    boost::asio::post(io, [&] {
      f();
      done.set_value();
    });
    done.get_future().wait();
  }

  struct Result {
    GrpcStatus status;
    hookapi::PodSandboxHookResponse response;
    std::chrono::milliseconds took;
  };
  Result call(const hookapi::PodSandboxHookRequest& req, std::chrono::milliseconds timeout = 2000ms,
              const std::string& path = kPodHook) {
    std::promise<Result> result;
    bool returned = false;
    const auto t0 = std::chrono::steady_clock::now();
    boost::asio::post(io, [&] {
      client->call(path, req.SerializeAsString(), timeout,
                   [&, t0](const GrpcStatus& status, std::string bytes) {
                     Result r{status, {}, {}};
                     // `done` never runs inside call(): the relay relies on it.
                     CHECK(returned);
                     if (status.ok())
                       CHECK(r.response.ParseFromString(bytes));
                     r.took = std::chrono::duration_cast<std::chrono::milliseconds>(
                         std::chrono::steady_clock::now() - t0);
                     result.set_value(std::move(r));
                   });
      returned = true;
    });
    return result.get_future().get();
  }
  void close() {
    onIo([&] { client->close(); });
  }
};

hookapi::PodSandboxHookRequest pod(const std::string& name, std::size_t pad = 0) {
  hookapi::PodSandboxHookRequest req;
  req.mutable_pod_meta()->set_name(name);
  req.mutable_pod_meta()->set_uid("uid-" + name);
  if (pad > 0) {
    (*req.mutable_labels())["pad"] = std::to_string(pad);
    (*req.mutable_annotations())["big"] = std::string(pad, 'a');
  }
  return req;
}

// A small request whose answer alone is large (#2678: a hook server's oversized reply).
hookapi::PodSandboxHookRequest askForLargeReply(const std::string& name, std::size_t pad) {
  hookapi::PodSandboxHookRequest req;
  req.mutable_pod_meta()->set_name(name);
  req.mutable_pod_meta()->set_uid("uid-" + name);
  (*req.mutable_labels())["pad"] = std::to_string(pad);
  return req;
}

std::unique_ptr<hookapi::RuntimeHookService::Stub> grpcppStub(const std::string& socket) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(16 << 20);
  return hookapi::RuntimeHookService::NewStub(
      grpc::CreateCustomChannel("unix:" + socket, grpc::InsecureChannelCredentials(), args));
}

}  // namespace

TEST_CASE("grpc unary: koord client and koord server", "[runtime-proxy][h2]") {
  koord::testing::holdCallbackMachinery();
  TempTree dir("koord-h2");
  const std::string socket = dir.path("hooks.sock").string();
  KoordServer server(socket);
  KoordClient client(socket);

  auto r = client.call(pod("web"));
  REQUIRE(r.status.ok());
  CHECK(r.response.annotations().at("name") == "web");
  CHECK(r.response.cgroup_parent() == "/kubepods/besteffort/uid-web");

  // The status and its message as the handler gave them (percent-encoded on the wire).
  r = client.call(pod("fail-1"));
  CHECK(r.status.code == GrpcCode::kInternal);
  CHECK(r.status.message == "no: 100% \"refused\"\nsecond line \xc3\xa9");

  CHECK(client.call(pod("x"), 2000ms, "/runtime.v1alpha1.RuntimeHookService/Nope").status.code ==
        GrpcCode::kUnimplemented);

  // Requests and answers larger than HTTP/2's default 64 KiB windows, several in flight on one
  // connection at once.
  std::vector<std::future<KoordClient::Result>> many;
  for (int i = 0; i < 8; ++i)
    many.push_back(std::async(std::launch::async, [&, i] {
      return client.call(pod("big-" + std::to_string(i), 300'000 + i));
    }));
  for (int i = 0; i < 8; ++i) {
    auto big = many[i].get();
    REQUIRE(big.status.ok());
    CHECK(big.response.annotations().at("name") == "big-" + std::to_string(i));
    CHECK(big.response.annotations().at("pad").size() == 300'000u + i);
  }

  // Over gRPC's 4 MiB message limit: refused, and the connection still serves.
  r = client.call(pod("huge", 5u << 20), 5000ms);
  CHECK(r.status.code == GrpcCode::kResourceExhausted);
  CHECK(client.call(pod("after")).status.ok());
  // Only the answer over the limit: an error for this call, and the connection still serves.
  r = client.call(askForLargeReply("huge-reply", 5u << 20), 5000ms);
  CHECK(r.status.code == GrpcCode::kResourceExhausted);
  CHECK(client.call(pod("after-reply")).status.ok());

  // A handler slower than the deadline: DEADLINE_EXCEEDED at the deadline, not at the answer.
  server.hang_ms = 600;
  r = client.call(pod("hang"), 100ms);
  CHECK(r.status.code == GrpcCode::kDeadlineExceeded);
  CHECK(r.took < 500ms);
  server.hang_ms = 0;
  std::this_thread::sleep_for(700ms);
  CHECK(client.call(pod("after-hang")).status.ok());
}

TEST_CASE("grpc unary: koord client against a grpc++ server", "[runtime-proxy][h2]") {
  koord::testing::holdCallbackMachinery();
  TempTree dir("koord-h2");
  const std::string socket = dir.path("hooks.sock").string();
  KoordClient client(socket);

  // Nobody listening: UNAVAILABLE at once, not after the deadline.
  auto r = client.call(pod("early"), 2000ms);
  CHECK(r.status.code == GrpcCode::kUnavailable);
  CHECK(r.took < 200ms);

  {
    GrpcppServer server(socket);
    r = client.call(pod("web"));
    REQUIRE(r.status.ok());
    CHECK(r.response.annotations().at("name") == "web");

    r = client.call(pod("fail"));
    CHECK(r.status.code == GrpcCode::kPermissionDenied);
    CHECK(r.status.message == "no: 100% \"refused\"");

    // grpc++ answers larger than its own 64 KiB window toward us only as we grant ours.
    r = client.call(pod("big", 2u << 20), 5000ms);
    REQUIRE(r.status.ok());
    CHECK(r.response.annotations().at("pad").size() == 2u << 20);

    r = client.call(pod("hang"), 150ms);
    CHECK(r.status.code == GrpcCode::kDeadlineExceeded);
    CHECK(r.took < 1000ms);

    // A grpc++ hook server sends what it likes: an answer over the limit is this call's error.
    r = client.call(askForLargeReply("huge-reply", 5u << 20), 5000ms);
    CHECK(r.status.code == GrpcCode::kResourceExhausted);
    r = client.call(pod("after-reply"));
    REQUIRE(r.status.ok());
    CHECK(r.response.annotations().at("name") == "after-reply");
  }
  // The server went away: the next call fails fast; a new server is reached by the next call.
  r = client.call(pod("gone"));
  CHECK(r.status.code == GrpcCode::kUnavailable);
  GrpcppServer again(socket);
  r = client.call(pod("back"));
  REQUIRE(r.status.ok());
  CHECK(r.response.annotations().at("name") == "back");
}

TEST_CASE("grpc unary: grpc++ client against koord's server", "[runtime-proxy][h2]") {
  koord::testing::holdCallbackMachinery();
  TempTree dir("koord-h2");
  const std::string socket = dir.path("hooks.sock").string();
  KoordServer server(socket);
  auto stub = grpcppStub(socket);

  auto call = [&](const hookapi::PodSandboxHookRequest& req,
                  hookapi::PodSandboxHookResponse& resp) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + 5s);
    return stub->PreRunPodSandboxHook(&ctx, req, &resp);
  };
  hookapi::PodSandboxHookResponse resp;
  REQUIRE(call(pod("web"), resp).ok());
  CHECK(resp.annotations().at("name") == "web");

  const auto failed = call(pod("fail"), resp);
  CHECK(failed.error_code() == grpc::StatusCode::INTERNAL);
  CHECK(failed.error_message() == "no: 100% \"refused\"\nsecond line \xc3\xa9");

  // An answer of 3 MiB: koord's server waits for grpc++'s window updates.
  REQUIRE(call(pod("big", 3u << 20), resp).ok());
  CHECK(resp.annotations().at("pad").size() == 3u << 20);

  // Many calls on the one connection.
  for (int i = 0; i < 200; ++i) {
    hookapi::PodSandboxHookResponse each;
    REQUIRE(call(pod("n" + std::to_string(i)), each).ok());
    CHECK(each.annotations().at("name") == "n" + std::to_string(i));
  }

  grpc::ClientContext ctx;
  hookapi::ContainerResourceHookResponse container;
  CHECK(stub->PreCreateContainerHook(&ctx, {}, &container).error_code() ==
        grpc::StatusCode::UNIMPLEMENTED);
}

TEST_CASE("grpc unary: koord's server closes a connection that is not HTTP/2, and serves on",
          "[runtime-proxy][h2]") {
  koord::testing::holdCallbackMachinery();
  TempTree dir("koord-h2");
  const std::string socket = dir.path("hooks.sock").string();
  KoordServer server(socket);

  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", socket.c_str());
  REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  const std::string junk = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
  REQUIRE(::write(fd, junk.data(), junk.size()) == static_cast<ssize_t>(junk.size()));
  // The server answers with its SETTINGS (sent on accept) and then GOAWAY, and closes.
  char buf[256];
  ssize_t total = 0;
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;)
    total += n;
  CHECK(total > 0);
  ::close(fd);

  KoordClient client(socket);
  CHECK(client.call(pod("still")).status.ok());
}

// A grpc-go client, as Koordinator's runtime-proxy is: containerd's `ctr` (installed with the
// test node's containerd) asks koord's server for containerd's Version service.
TEST_CASE("grpc unary: koord's server answers a grpc-go client (ctr)", "[runtime-proxy][h2]") {
  if (std::system("command -v ctr >/dev/null 2>&1") != 0) {
    WARN("no ctr on this machine; the grpc-go interop check did not run");
    return;
  }
  TempTree dir("koord-h2");
  const std::string socket = dir.path("containerd.sock").string();
  GrpcUnaryServer server;
  std::atomic<int> calls{0};
  // containerd.services.version.v1.VersionResponse{version = 1, revision = 2}.
  server.addMethod("/containerd.services.version.v1.Version/Version",
                   [&](std::string_view, std::string& out) {
                     ++calls;
                     out = std::string(
                         "\x0a\x0bkoord-h2-ok\x12\x03"
                         "abc",
                         18);
                     return GrpcStatus{};
                   });
  server.start(socket);
  std::string output;
  {
    std::unique_ptr<FILE, int (*)(FILE*)> ctr(
        ::popen(("ctr --timeout 5s --address " + socket + " version 2>&1").c_str(), "r"), ::pclose);
    REQUIRE(ctr);
    char buf[512];
    while (std::fgets(buf, sizeof buf, ctr.get()))
      output += buf;
  }
  INFO(output);
  CHECK(calls == 1);
  CHECK(output.find("Version:  koord-h2-ok") != std::string::npos);
  CHECK(output.find("Revision: abc") != std::string::npos);
  // ctr then asks for a method the server does not have: grpc-go reads our UNIMPLEMENTED.
  CHECK(output.find("unknown method /containerd.services.introspection.v1.Introspection/Server") !=
        std::string::npos);
}
