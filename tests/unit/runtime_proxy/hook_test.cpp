// Koordinator's hooks through the proxy, over real gRPC: a hook server's answers reach the
// runtime in both CRI versions; failure policies, the deadline and the skip label decide what
// a missing, failing or hung hook server costs; registrations follow the directory (inotify).
#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server.h>
#include <grpcpp/server_builder.h>

#include <algorithm>
#include <atomic>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>

#include "cri/cri_proxy_server.h"
#include "cri/runtime/v1/api.grpc.pb.h"
#include "cri/runtime/v1alpha2/api.grpc.pb.h"
#include "hooks/hook_dispatcher.h"
#include "hooks/hook_interceptor.h"
#include "hooks/hook_server_registry.h"
#include "hooks/runtime_object_cache.h"
#include "koord/core/log.h"
#include "koordinator/runtime/v1alpha1/api.grpc.pb.h"
#include "test_cri_backend.h"

using namespace koord::roles::runtime_proxy;
using namespace std::chrono_literals;
using koord::testing::TempTree;
using proxy_test::TestCriBackend;

namespace {

// kHuge: an answer over gRPC's 4 MiB message limit (#2678).
enum class Mode { kAnswer, kFail, kHang, kHuge };

// A hook server as a koordlet would run one: BE cgroup values, an annotation, an env var.
class TestHookServer final : public runtime::v1alpha1::RuntimeHookService::Service {
 public:
  std::atomic<Mode> mode{Mode::kAnswer};
  std::atomic<int> calls{0};

  grpc::Status PreRunPodSandboxHook(grpc::ServerContext* ctx,
                                    const runtime::v1alpha1::PodSandboxHookRequest* req,
                                    runtime::v1alpha1::PodSandboxHookResponse* resp) override {
    if (auto s = behave(ctx); !s.ok())
      return s;
    (*resp->mutable_annotations())["hooked"] = "pod:" + req->pod_meta().name();
    resp->set_cgroup_parent("/kubepods/besteffort/hooked-" + req->pod_meta().uid());
    return grpc::Status::OK;
  }
  grpc::Status PreStartContainerHook(grpc::ServerContext*,
                                     const runtime::v1alpha1::ContainerResourceHookRequest* req,
                                     runtime::v1alpha1::ContainerResourceHookResponse*) override {
    return note("PreStartContainer", *req);
  }
  grpc::Status PostStartContainerHook(grpc::ServerContext*,
                                      const runtime::v1alpha1::ContainerResourceHookRequest* req,
                                      runtime::v1alpha1::ContainerResourceHookResponse*) override {
    return note("PostStartContainer", *req);
  }
  grpc::Status PostStopContainerHook(grpc::ServerContext*,
                                     const runtime::v1alpha1::ContainerResourceHookRequest* req,
                                     runtime::v1alpha1::ContainerResourceHookResponse*) override {
    return note("PostStopContainer", *req);
  }
  grpc::Status PreUpdateContainerResourcesHook(
      grpc::ServerContext*, const runtime::v1alpha1::ContainerResourceHookRequest* req,
      runtime::v1alpha1::ContainerResourceHookResponse* resp) override {
    resp->mutable_container_resources()->set_cpu_shares(req->container_resources().cpu_shares() /
                                                        2);
    return note("PreUpdateContainerResources", *req);
  }

  std::vector<std::string> notes() {
    std::lock_guard lock(mu_);
    return notes_;
  }

  grpc::Status PreCreateContainerHook(
      grpc::ServerContext* ctx, const runtime::v1alpha1::ContainerResourceHookRequest* req,
      runtime::v1alpha1::ContainerResourceHookResponse* resp) override {
    if (auto s = behave(ctx); !s.ok())
      return s;
    (*resp->mutable_container_annotations())["hooked"] =
        "container:" + req->container_meta().name() + " in " + req->pod_cgroup_parent();
    resp->mutable_container_resources()->set_cpu_shares(2);
    (*resp->mutable_container_envs())["KOORD_HOOKED"] = "1";
    (*resp->mutable_container_envs())["FROM_KUBELET"] = "overridden";
    if (mode == Mode::kHuge)
      (*resp->mutable_container_annotations())["pad"] = std::string(5u << 20, 'p');
    return grpc::Status::OK;
  }

 private:
  // "<hook> <pod>/<container> <container id> shares=<n>": what the hook was told.
  grpc::Status note(const std::string& hook,
                    const runtime::v1alpha1::ContainerResourceHookRequest& req) {
    std::lock_guard lock(mu_);
    notes_.push_back(hook + " " + req.pod_meta().name() + "/" + req.container_meta().name() + " " +
                     req.container_meta().id() +
                     " shares=" + std::to_string(req.container_resources().cpu_shares()));
    return grpc::Status::OK;
  }

  std::mutex mu_;
  std::vector<std::string> notes_;

  grpc::Status behave(grpc::ServerContext* ctx) {
    ++calls;
    switch (mode.load()) {
      case Mode::kAnswer:
      case Mode::kHuge:
        return grpc::Status::OK;
      case Mode::kFail:
        return grpc::Status(grpc::StatusCode::INTERNAL, "koordlet says no");
      case Mode::kHang:
        while (!ctx->IsCancelled())
          std::this_thread::sleep_for(10ms);
        return grpc::Status(grpc::StatusCode::CANCELLED, "gave up");
    }
    return grpc::Status::OK;
  }
};

void writeFile(const std::string& path, const std::string& text) {
  // As an operator's tooling should: a temp file renamed into place.
  const std::string tmp = path + ".tmp";
  std::ofstream(tmp) << text;
  std::filesystem::rename(tmp, path);
}

struct HookRig {
  TempTree dir{"koord-proxy"};
  std::string runtime = dir.path("containerd.sock").string();
  std::string image = dir.path("image.sock").string();
  std::string proxy_socket = dir.path("proxy.sock").string();
  std::string hook_socket = dir.path("koordlet.sock").string();
  std::string hook_dir = dir.path("hookserver.d").string();
  TestHookServer hook;
  std::unique_ptr<grpc::Server> hook_server;
  TestCriBackend backend{runtime, image};
  HookServerRegistry registry{hook_dir};
  HookDispatcher dispatcher{registry, 300ms};
  RuntimeObjectCache cache;
  SkipLabelPolicy skip{"runtimeproxy.koordinator.sh/skip-hookserver", "true", {"kube-system"}};
  HookInterceptor interceptor{dispatcher, cache, skip};
  CriProxyServer proxy{{proxy_socket, runtime, image}, &interceptor};

  explicit HookRig(const std::string& policy = "Ignore") {
    koord::testing::holdCallbackMachinery();
    std::filesystem::create_directories(hook_dir);
    writeFile(hook_dir + "/koordlet.json",
              R"({"remote-endpoint": ")" + hook_socket + R"(", "failure-policy": ")" + policy +
                  R"(", "runtime-hooks": ["PreRunPodSandbox", "PreCreateContainer"]})");
    registry.rescan();
    startHookServer();
    proxy.start();
  }
  ~HookRig() { stopHookServer(); }

  void startHookServer() {
    grpc::ServerBuilder b;
    b.AddListeningPort("unix:" + hook_socket, grpc::InsecureServerCredentials());
    b.RegisterService(&hook);
    hook_server = b.BuildAndStart();
    REQUIRE(hook_server);
  }
  void stopHookServer() {
    if (hook_server) {
      hook_server->Shutdown(std::chrono::system_clock::now() + 1s);
      hook_server->Wait();
      hook_server.reset();
    }
  }

  std::shared_ptr<grpc::Channel> channel() {
    return grpc::CreateChannel("unix:" + proxy_socket, grpc::InsecureChannelCredentials());
  }
};

template <typename Api>
typename Api::CreateContainerRequest createRequest(bool skip_label = false,
                                                   const std::string& ns = "default") {
  typename Api::CreateContainerRequest req;
  auto* sandbox = req.mutable_sandbox_config();
  sandbox->mutable_metadata()->set_name("be-pod");
  sandbox->mutable_metadata()->set_namespace_(ns);
  sandbox->mutable_metadata()->set_uid("uid-1");
  sandbox->mutable_linux()->set_cgroup_parent("/kubepods/besteffort/poduid-1");
  if (skip_label)
    (*sandbox->mutable_labels())["runtimeproxy.koordinator.sh/skip-hookserver"] = "true";
  auto* config = req.mutable_config();
  config->mutable_metadata()->set_name("main");
  config->mutable_linux()->mutable_resources()->set_cpu_shares(1024);
  config->mutable_linux()->mutable_resources()->set_memory_limit_in_bytes(1 << 30);
  auto* env = config->add_envs();
  env->set_key("FROM_KUBELET");
  env->set_value("1");
  return req;
}

struct V1 {
  using CreateContainerRequest = runtime::v1::CreateContainerRequest;
  using CreateContainerResponse = runtime::v1::CreateContainerResponse;
  using Stub = runtime::v1::RuntimeService::Stub;
  static std::unique_ptr<Stub> stub(std::shared_ptr<grpc::Channel> c) {
    return runtime::v1::RuntimeService::NewStub(std::move(c));
  }
};
struct V1alpha2 {
  using CreateContainerRequest = runtime::v1alpha2::CreateContainerRequest;
  using CreateContainerResponse = runtime::v1alpha2::CreateContainerResponse;
  using Stub = runtime::v1alpha2::RuntimeService::Stub;
  static std::unique_ptr<Stub> stub(std::shared_ptr<grpc::Channel> c) {
    return runtime::v1alpha2::RuntimeService::NewStub(std::move(c));
  }
};

template <typename Api>
grpc::Status create(HookRig& rig, std::string& seen, bool skip_label = false,
                    const std::string& ns = "default") {
  auto stub = Api::stub(rig.channel());
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + 10s);
  typename Api::CreateContainerResponse resp;
  auto st = stub->CreateContainer(&ctx, createRequest<Api>(skip_label, ns), &resp);
  seen = resp.container_id();
  return st;
}

constexpr const char* kHookedContainer =
    "shares=2;cgroup=/kubepods/besteffort/poduid-1;env=FROM_KUBELET=overridden,KOORD_HOOKED=1,;"
    "hooked=container:main in /kubepods/besteffort/poduid-1";
constexpr const char* kPlainContainer =
    "shares=1024;cgroup=/kubepods/besteffort/poduid-1;env=FROM_KUBELET=1,;hooked=";

}  // namespace

TEST_CASE("runtime-proxy hooks: the hook's answers reach the runtime in both CRI versions",
          "[runtime-proxy]") {
  HookRig rig;
  std::string seen;
  REQUIRE(create<V1>(rig, seen).ok());
  CHECK(seen == kHookedContainer);
  REQUIRE(create<V1alpha2>(rig, seen).ok());
  CHECK(seen == kHookedContainer);

  // RunPodSandbox (v1alpha2, as kubelet 1.20 sends it): annotations and the cgroup parent.
  auto stub = runtime::v1alpha2::RuntimeService::NewStub(rig.channel());
  grpc::ClientContext ctx;
  runtime::v1alpha2::RunPodSandboxRequest req;
  req.mutable_config()->mutable_metadata()->set_name("be-pod");
  req.mutable_config()->mutable_metadata()->set_uid("uid-1");
  req.mutable_config()->mutable_linux()->set_cgroup_parent("/kubepods/besteffort/poduid-1");
  runtime::v1alpha2::RunPodSandboxResponse resp;
  REQUIRE(stub->RunPodSandbox(&ctx, req, &resp).ok());
  CHECK(resp.pod_sandbox_id() == "be-pod|/kubepods/besteffort/hooked-uid-1|pod:be-pod");
  CHECK(rig.hook.calls == 3);
}

TEST_CASE("runtime-proxy hooks: the skip label keeps a pod's calls away from hook servers",
          "[runtime-proxy]") {
  HookRig rig;
  std::string seen;
  REQUIRE(create<V1>(rig, seen, /*skip_label=*/true, "kube-system").ok());
  CHECK(seen == kPlainContainer);
  CHECK(rig.hook.calls == 0);
}

TEST_CASE(
    "runtime-proxy hooks: the skip label outside --skip-hookserver-namespaces is ignored, "
    "logged once per pod",
    "[runtime-proxy]") {
  HookRig rig;
  struct Lines {
    std::mutex mu;
    std::vector<std::string> lines;
    Lines() {
      koord::log::setSink([this](std::string_view line) {
        std::lock_guard lock(mu);
        if (line.find("skip-hookserver-namespaces") != std::string_view::npos)
          lines.emplace_back(line);
      });
    }
    ~Lines() { koord::log::setSink(nullptr); }
  } captured;
  std::string seen;
  // Anyone who may create a pod in "default" may label it: the hooks (koord's cgroup policy)
  // still run.
  REQUIRE(create<V1>(rig, seen, /*skip_label=*/true, "default").ok());
  CHECK(seen == kHookedContainer);
  REQUIRE(create<V1alpha2>(rig, seen, /*skip_label=*/true, "default").ok());
  CHECK(seen == kHookedContainer);
  CHECK(rig.hook.calls == 2);
  std::lock_guard lock(captured.mu);
  REQUIRE(captured.lines.size() == 1);
  CHECK_THAT(captured.lines[0], Catch::Contains("default/be-pod (uid-1)"));
}

TEST_CASE(
    "runtime-proxy hooks: Ignore: a failing or dead or hung hook server costs at most the "
    "deadline",
    "[runtime-proxy]") {
  HookRig rig("Ignore");
  std::string seen;
  rig.hook.mode = Mode::kFail;
  REQUIRE(create<V1>(rig, seen).ok());
  CHECK(seen == kPlainContainer);

  rig.hook.mode = Mode::kHang;
  auto t0 = std::chrono::steady_clock::now();
  REQUIRE(create<V1>(rig, seen).ok());
  const auto hung = std::chrono::steady_clock::now() - t0;
  CHECK(seen == kPlainContainer);
  CHECK(hung >= 250ms);  // it waited for the hook...
  CHECK(hung < 3s);      // ...no longer than the 300 ms deadline and some slack

  // An answer too large to take is the hook's failure: under Ignore the call goes on as the
  // kubelet sent it, and the hook connection serves the next call.
  rig.hook.mode = Mode::kHuge;
  REQUIRE(create<V1>(rig, seen).ok());
  CHECK(seen == kPlainContainer);
  rig.hook.mode = Mode::kAnswer;
  REQUIRE(create<V1>(rig, seen).ok());
  CHECK(seen == kHookedContainer);

  rig.stopHookServer();
  t0 = std::chrono::steady_clock::now();
  REQUIRE(create<V1>(rig, seen).ok());
  CHECK(seen == kPlainContainer);
  CHECK(std::chrono::steady_clock::now() - t0 < 3s);
}

TEST_CASE(
    "runtime-proxy hooks: Fail: the call fails with the hook's error and never reaches "
    "the runtime",
    "[runtime-proxy]") {
  HookRig rig("Fail");
  rig.hook.mode = Mode::kFail;
  const int before = rig.backend.runtimeCalls();
  std::string seen;
  auto st = create<V1>(rig, seen);
  CHECK(st.error_code() == grpc::StatusCode::UNKNOWN);
  CHECK(st.error_message() == "hook server err: koordlet says no");
  CHECK(rig.backend.runtimeCalls() == before);
  // A hung hook server under Fail: the call fails once the deadline has passed, not when the
  // kubelet gives up, and the runtime still never sees it.
  rig.hook.mode = Mode::kHang;
  const auto t0 = std::chrono::steady_clock::now();
  st = create<V1>(rig, seen);
  const auto hung = std::chrono::steady_clock::now() - t0;
  CHECK_FALSE(st.ok());
  CHECK(st.error_code() != grpc::StatusCode::OK);
  CHECK(hung >= 250ms);
  CHECK(hung < 3s);
  CHECK(rig.backend.runtimeCalls() == before);
  // And back to normal once the hook server answers again.
  rig.hook.mode = Mode::kAnswer;
  REQUIRE(create<V1>(rig, seen).ok());
  CHECK(seen == kHookedContainer);
}

TEST_CASE("runtime-proxy hooks: registrations follow hookserver.d through inotify",
          "[runtime-proxy]") {
  TempTree dir{"koord-proxy"};
  const std::string hooks = dir.path("hookserver.d").string();
  HookServerRegistry registry(hooks);
  boost::asio::io_context io;
  auto guard = boost::asio::make_work_guard(io);
  registry.start(io);
  std::thread loop([&] { io.run(); });
  auto eventually = [&](auto check) {
    for (int i = 0; i < 100 && !check(); ++i)
      std::this_thread::sleep_for(20ms);
    return check();
  };
  CHECK(registry.servers()->empty());

  writeFile(
      hooks + "/b-koordlet.json",
      R"({"remote-endpoint": "/run/koordlet.sock", "runtime-hooks": ["PreCreateContainer"]})");
  writeFile(hooks + "/a-other.json",
            R"({"remote-endpoint": "/run/other.sock", "failure-policy": "Fail"})");
  std::ofstream(hooks + "/notes.txt") << "not a registration";
  CHECK(eventually([&] { return registry.servers()->size() == 2; }));
  auto servers = registry.servers();
  REQUIRE(servers->size() == 2);
  CHECK((*servers)[0].file == "a-other.json");  // file-name order
  CHECK((*servers)[1].config.remote_endpoint == "/run/koordlet.sock");

  // A broken rewrite keeps the last good registration.
  writeFile(hooks + "/b-koordlet.json", R"({"remote-endpoint": "/run/koordlet.sock",)");
  std::this_thread::sleep_for(200ms);
  servers = registry.servers();
  REQUIRE(servers->size() == 2);
  CHECK((*servers)[1].config.hooks.size() == 1);
  // A good one replaces it.
  writeFile(hooks + "/b-koordlet.json",
            R"({"remote-endpoint": "/run/koordlet-2.sock", "runtime-hooks": []})");
  CHECK(eventually([&] {
    auto s = registry.servers();
    return s->size() == 2 && (*s)[1].config.remote_endpoint == "/run/koordlet-2.sock";
  }));
  std::filesystem::remove(hooks + "/a-other.json");
  CHECK(eventually([&] { return registry.servers()->size() == 1; }));

  boost::asio::post(io, [&] { registry.stop(); });
  guard.reset();
  loop.join();
}

TEST_CASE(
    "runtime-proxy hooks: calls that name only a container get what its creation told the "
    "hook",
    "[runtime-proxy]") {
  HookRig rig;
  writeFile(rig.hook_dir + "/koordlet.json",
            R"({"remote-endpoint": ")" + rig.hook_socket +
                R"(", "runtime-hooks": ["PreCreateContainer", "PreStartContainer",
                   "PostStartContainer", "PostStopContainer", "PreUpdateContainerResources"]})");
  rig.registry.rescan();
  std::string id;
  REQUIRE(create<V1>(rig, id).ok());  // the test runtime's container id describes the request
  auto stub = runtime::v1::RuntimeService::NewStub(rig.channel());
  auto unary = [&](auto method, const auto& req, auto resp) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + 10s);
    return (stub.get()->*method)(&ctx, req, &resp);
  };
  runtime::v1::StartContainerRequest start;
  start.set_container_id(id);
  REQUIRE(unary(&runtime::v1::RuntimeService::Stub::StartContainer, start,
                runtime::v1::StartContainerResponse())
              .ok());
  // An update: the hook sees the new resources and halves cpu.shares; the runtime gets that.
  runtime::v1::UpdateContainerResourcesRequest update;
  update.set_container_id(id);
  update.mutable_linux()->set_cpu_shares(1000);
  REQUIRE(unary(&runtime::v1::RuntimeService::Stub::UpdateContainerResources, update,
                runtime::v1::UpdateContainerResourcesResponse())
              .ok());
  CHECK(rig.backend.lastUpdatedShares() == 500);
  runtime::v1::StopContainerRequest stop;
  stop.set_container_id(id);
  REQUIRE(unary(&runtime::v1::RuntimeService::Stub::StopContainer, stop,
                runtime::v1::StopContainerResponse())
              .ok());
  runtime::v1::RemoveContainerRequest remove;
  remove.set_container_id(id);
  REQUIRE(unary(&runtime::v1::RuntimeService::Stub::RemoveContainer, remove,
                runtime::v1::RemoveContainerResponse())
              .ok());
  // Post hooks run after kubelet has its answer: wait for the last one.
  std::vector<std::string> notes;
  for (int i = 0; i < 100; ++i) {
    notes = rig.hook.notes();
    if (notes.size() >= 4)
      break;
    std::this_thread::sleep_for(50ms);
  }
  // Post hooks are not waited for, so they may land after the next call's pre hook.
  std::sort(notes.begin(), notes.end());
  REQUIRE(notes.size() == 4);
  CHECK(notes[0] == "PostStartContainer be-pod/main " + id + " shares=2");
  CHECK(notes[1] == "PostStopContainer be-pod/main " + id + " shares=2");
  CHECK(notes[2] == "PreStartContainer be-pod/main " + id + " shares=2");
  CHECK(notes[3] == "PreUpdateContainerResources be-pod/main " + id + " shares=1000");
  // Removed: the proxy forgets it (once kubelet has the answer); a later start of that id calls
  // no hook.
  for (int i = 0; i < 100 && rig.cache.size() != 0; ++i)
    std::this_thread::sleep_for(20ms);
  CHECK(rig.cache.size() == 0);
  REQUIRE(unary(&runtime::v1::RuntimeService::Stub::StartContainer, start,
                runtime::v1::StartContainerResponse())
              .ok());
  std::this_thread::sleep_for(100ms);
  CHECK(rig.hook.notes().size() == 4);
}
