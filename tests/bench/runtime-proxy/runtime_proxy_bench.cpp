// CRI calls made straight to containerd and through koord runtime-proxy in one run, alternating
// call by call: p50/p99 of each and what the proxy adds. With --hook-dir the bench also serves a
// RuntimeHookService (answering at once) and registers it, so hooked calls pay a real hook call.
// The pass-through figures are printed twice: all calls, and the calls of the seconds in which
// the hypervisor took no time from this VM (/proc/stat's steal), where the tail is the proxy's.
// Each pass-through round also makes the calls on a second direct channel: the difference between
// two direct channels (A/A) is what the p99 column reads when nothing at all is added, the
// resolution of an "added p99" figure on this machine.
//
//   koord_bench_runtime_proxy --direct /run/containerd.sock --proxy /run/proxy.sock
//       [--image koord.local/busybox:local] [--iterations 2000] [--cycles 40] [--hook-dir DIR]
//       [--hook-server koord|grpcpp] [--proxy-name "koord runtime-proxy"]
// --proxy-name says in the first line what --proxy is (run.sh also times a byte relay there).
#include <fmt/format.h>
#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server.h>
#include <grpcpp/server_builder.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "bench_stats.h"
#include "cri/runtime/v1/api.grpc.pb.h"
#include "koord/h2/grpc_unary_server.h"
#include "koordinator/runtime/v1alpha1/api.grpc.pb.h"

namespace cri = ::runtime::v1;
namespace hookapi = ::runtime::v1alpha1;
using Clock = std::chrono::steady_clock;
using koord::bench::percentile;

namespace {

struct Options {
  std::string direct;
  std::string proxy;
  std::string image = "koord.local/busybox:local";
  int iterations = 2000;
  int cycles = 40;
  std::string hook_dir;
  std::string hook_server = "koord";  // or grpcpp
  std::string proxy_name = "koord runtime-proxy";
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc)
        throw std::invalid_argument(a + " needs a value");
      return argv[++i];
    };
    if (a == "--direct")
      o.direct = next();
    else if (a == "--proxy")
      o.proxy = next();
    else if (a == "--image")
      o.image = next();
    else if (a == "--iterations")
      o.iterations = std::stoi(next());
    else if (a == "--cycles")
      o.cycles = std::stoi(next());
    else if (a == "--hook-dir")
      o.hook_dir = next();
    else if (a == "--hook-server")
      o.hook_server = next();
    else if (a == "--proxy-name")
      o.proxy_name = next();
    else
      throw std::invalid_argument("unknown argument " + a);
  }
  if (o.direct.empty() || o.proxy.empty())
    throw std::invalid_argument("--direct and --proxy are required");
  return o;
}

// A hook server that answers at once: what a hook costs the proxy, not what a koordlet does.
// Served by koord's gRPC server (as the koordlet serves its hooks) or, with --hook-server grpcpp,
// by grpc++'s, for comparison.
hookapi::PodSandboxHookResponse instantPodAnswer() {
  hookapi::PodSandboxHookResponse resp;
  (*resp.mutable_annotations())["bench.koord/hooked"] = "true";
  return resp;
}

hookapi::ContainerResourceHookResponse instantContainerAnswer() {
  hookapi::ContainerResourceHookResponse resp;
  resp.mutable_container_resources()->set_cpu_shares(512);
  return resp;
}

class InstantHooks final : public hookapi::RuntimeHookService::Service {
  grpc::Status PreRunPodSandboxHook(grpc::ServerContext*, const hookapi::PodSandboxHookRequest*,
                                    hookapi::PodSandboxHookResponse* resp) override {
    *resp = instantPodAnswer();
    return grpc::Status::OK;
  }
  grpc::Status PreCreateContainerHook(grpc::ServerContext*,
                                      const hookapi::ContainerResourceHookRequest*,
                                      hookapi::ContainerResourceHookResponse* resp) override {
    *resp = instantContainerAnswer();
    return grpc::Status::OK;
  }
};

// Where a call went: containerd, the proxy, or containerd again over a second channel (A/A).
enum Path { kDirect = 0, kProxy = 1, kControl = 2 };

struct Samples {
  std::vector<double> us[3];
  // The second of the run each sample ended in (pass-through calls), for the steal filter.
  std::vector<int> second[3];
};

double micros(Clock::duration d) {
  return std::chrono::duration<double, std::micro>(d).count();
}

void check(const grpc::Status& s, const std::string& what) {
  if (!s.ok())
    throw std::runtime_error(
        fmt::format("{}: {} {}", what, static_cast<int>(s.error_code()), s.error_message()));
}

std::unique_ptr<cri::RuntimeService::Stub> stubFor(const std::string& socket) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(16 << 20);
  // A connection of its own: grpc would otherwise share one between the two direct channels.
  args.SetInt("grpc.use_local_subchannel_pool", 1);
  return cri::RuntimeService::NewStub(
      grpc::CreateCustomChannel("unix:" + socket, grpc::InsecureChannelCredentials(), args));
}

template <typename Req, typename Resp, typename Call>
double timed(Call call, const Req& req, Resp& resp, const std::string& what) {
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
  const auto t0 = Clock::now();
  auto st = call(&ctx, req, &resp);
  const auto t = Clock::now() - t0;
  check(st, what);
  return micros(t);
}

}  // namespace

int main(int argc, char** argv) try {
  const Options o = parse(argc, argv);
  std::unique_ptr<grpc::Server> hooks;
  InstantHooks instant;
  koord::h2::GrpcUnaryServer koord_hooks;
  const std::string socket =
      (std::filesystem::temp_directory_path() / fmt::format("koord-bench-hooks-{}.sock", getpid()))
          .string();
  if (!o.hook_dir.empty()) {
    if (o.hook_server == "grpcpp") {
      grpc::ServerBuilder b;
      b.AddListeningPort("unix:" + socket, grpc::InsecureServerCredentials());
      b.RegisterService(&instant);
      hooks = b.BuildAndStart();
    } else {
      const std::string service = "/runtime.v1alpha1.RuntimeHookService/";
      koord_hooks.addMethod(service + "PreRunPodSandboxHook",
                            [](std::string_view, std::string& out) {
                              out = instantPodAnswer().SerializeAsString();
                              return koord::h2::GrpcStatus{};
                            });
      koord_hooks.addMethod(service + "PreCreateContainerHook",
                            [](std::string_view, std::string& out) {
                              out = instantContainerAnswer().SerializeAsString();
                              return koord::h2::GrpcStatus{};
                            });
      koord_hooks.start(socket);
    }
    std::filesystem::create_directories(o.hook_dir);
    std::ofstream(o.hook_dir + "/bench.json")
        << R"({"remote-endpoint": ")" << socket
        << R"(", "failure-policy": "Fail", "runtime-hooks": ["PreRunPodSandbox", "PreCreateContainer"]})";
    std::this_thread::sleep_for(std::chrono::seconds(1));  // the proxy's inotify picks it up
  }

  auto direct = stubFor(o.direct);
  auto proxy = stubFor(o.proxy);
  auto control = stubFor(o.direct);
  cri::RuntimeService::Stub* stubs[3] = {direct.get(), proxy.get(), control.get()};
  std::map<std::string, Samples> samples;
  std::optional<koord::bench::StealSampler> steal;
  auto record = [&](const std::string& name, int which, double us) {
    auto& s = samples[name];
    s.us[which].push_back(us);
    if (steal)
      s.second[which].push_back(steal->second(Clock::now()));
  };

  // Warm every channel up before timing anything.
  for (auto* s : stubs) {
    cri::VersionResponse v;
    timed([&](auto* c, const auto& r, auto* p) { return s->Version(c, r, p); },
          cri::VersionRequest(), v, "Version");
  }
  std::string some_container;
  {
    cri::ListContainersResponse l;
    timed([&](auto* c, const auto& r, auto* p) { return direct->ListContainers(c, r, p); },
          cri::ListContainersRequest(), l, "ListContainers");
    if (l.containers_size() > 0)
      some_container = l.containers(0).id();
  }

  // Pass-through calls: direct, proxied and direct again, in turn, each first as often.
  steal.emplace(Clock::now());
  for (int i = 0; i < o.iterations; ++i) {
    for (int which : {i % 3, (i + 1) % 3, (i + 2) % 3}) {
      auto* s = stubs[which];
      cri::VersionResponse v;
      record("Version", which,
             timed([&](auto* c, const auto& r, auto* p) { return s->Version(c, r, p); },
                   cri::VersionRequest(), v, "Version"));
      cri::ListContainersResponse l;
      record("ListContainers", which,
             timed([&](auto* c, const auto& r, auto* p) { return s->ListContainers(c, r, p); },
                   cri::ListContainersRequest(), l, "ListContainers"));
      if (!some_container.empty()) {
        cri::ContainerStatusRequest req;
        req.set_container_id(some_container);
        cri::ContainerStatusResponse st;
        record("ContainerStatus", which,
               timed([&](auto* c, const auto& r, auto* p) { return s->ContainerStatus(c, r, p); },
                     req, st, "ContainerStatus"));
      }
    }
  }

  steal->stop();

  // Sandbox and container lifecycles, host network (no CNI), alternating.
  for (int i = 0; i < o.cycles; ++i) {
    for (int which : {i % 2, 1 - i % 2}) {
      auto* s = stubs[which];
      cri::PodSandboxConfig config;
      const std::string name = fmt::format("bench-{}-{}-{}", getpid(), i, which);
      config.mutable_metadata()->set_name(name);
      config.mutable_metadata()->set_namespace_("koord-bench");
      config.mutable_metadata()->set_uid(name);
      config.mutable_linux()->mutable_security_context()->mutable_namespace_options()->set_network(
          cri::NODE);
      cri::RunPodSandboxRequest run;
      *run.mutable_config() = config;
      cri::RunPodSandboxResponse sandbox;
      record("RunPodSandbox", which,
             timed([&](auto* c, const auto& r, auto* p) { return s->RunPodSandbox(c, r, p); }, run,
                   sandbox, "RunPodSandbox"));
      cri::CreateContainerRequest create;
      create.set_pod_sandbox_id(sandbox.pod_sandbox_id());
      *create.mutable_sandbox_config() = config;
      create.mutable_config()->mutable_metadata()->set_name("main");
      create.mutable_config()->mutable_image()->set_image(o.image);
      create.mutable_config()->add_command("sleep");
      create.mutable_config()->add_args("3600");
      cri::CreateContainerResponse container;
      record("CreateContainer", which,
             timed([&](auto* c, const auto& r, auto* p) { return s->CreateContainer(c, r, p); },
                   create, container, "CreateContainer"));
      cri::StartContainerRequest start;
      start.set_container_id(container.container_id());
      cri::StartContainerResponse started;
      record("StartContainer", which,
             timed([&](auto* c, const auto& r, auto* p) { return s->StartContainer(c, r, p); },
                   start, started, "StartContainer"));
      cri::StopContainerRequest stop;
      stop.set_container_id(container.container_id());
      stop.set_timeout(0);
      cri::StopContainerResponse stopped;
      record("StopContainer", which,
             timed([&](auto* c, const auto& r, auto* p) { return s->StopContainer(c, r, p); }, stop,
                   stopped, "StopContainer"));
      cri::RemoveContainerRequest remove;
      remove.set_container_id(container.container_id());
      cri::RemoveContainerResponse removed;
      record("RemoveContainer", which,
             timed([&](auto* c, const auto& r, auto* p) { return s->RemoveContainer(c, r, p); },
                   remove, removed, "RemoveContainer"));
      cri::StopPodSandboxRequest stop_pod;
      stop_pod.set_pod_sandbox_id(sandbox.pod_sandbox_id());
      cri::StopPodSandboxResponse pod_stopped;
      record("StopPodSandbox", which,
             timed([&](auto* c, const auto& r, auto* p) { return s->StopPodSandbox(c, r, p); },
                   stop_pod, pod_stopped, "StopPodSandbox"));
      cri::RemovePodSandboxRequest remove_pod;
      remove_pod.set_pod_sandbox_id(sandbox.pod_sandbox_id());
      cri::RemovePodSandboxResponse pod_removed;
      record("RemovePodSandbox", which,
             timed([&](auto* c, const auto& r, auto* p) { return s->RemovePodSandbox(c, r, p); },
                   remove_pod, pod_removed, "RemovePodSandbox"));
    }
  }

  fmt::print("runtime-proxy bench, {}: {} pass-through rounds, {} lifecycles each way, hooks {}\n",
             o.proxy_name, o.iterations, o.cycles,
             o.hook_dir.empty()
                 ? std::string("none")
                 : fmt::format("registered (answer at once, {} server)", o.hook_server));
  auto header = [](const char* a, const char* b, const char* diff) {
    fmt::print("{:<18} {:>6} {:>11} {:>11} {:>11} {:>11} {:>11} {:>11}\n", "call", "n",
               fmt::format("{} p50", a), fmt::format("{} p50", b), fmt::format("{} p50", diff),
               fmt::format("{} p99", a), fmt::format("{} p99", b), fmt::format("{} p99", diff));
  };
  auto row = [](const char* name, const std::vector<double>& a, const std::vector<double>& b) {
    const double a50 = percentile(a, 0.5), b50 = percentile(b, 0.5);
    const double a99 = percentile(a, 0.99), b99 = percentile(b, 0.99);
    fmt::print("{:<18} {:>6} {:>9.0f}us {:>9.0f}us {:>9.0f}us {:>9.0f}us {:>9.0f}us {:>9.0f}us\n",
               name, a.size(), a50, b50, b50 - a50, a99, b99, b99 - a99);
  };
  const char* order[] = {"Version",         "ListContainers",  "ContainerStatus", "RunPodSandbox",
                         "CreateContainer", "StartContainer",  "StopContainer",   "RemoveContainer",
                         "StopPodSandbox",  "RemovePodSandbox"};
  const char* pass_through[] = {"Version", "ListContainers", "ContainerStatus"};
  header("direct", "proxy", "added");
  for (const char* name : order)
    if (auto it = samples.find(name); it != samples.end())
      row(name, it->second.us[kDirect], it->second.us[kProxy]);
  // The pass-through calls again, only those that ended in seconds without steal.
  auto quiet = [&](const Samples& s, Path path) {
    std::vector<double> out;
    for (std::size_t i = 0; i < s.us[path].size() && i < s.second[path].size(); ++i)
      if (steal->quiet(s.second[path][i]))
        out.push_back(s.us[path][i]);
    return out;
  };
  auto quietRows = [&](Path a, Path b) {
    for (const char* name : pass_through)
      if (auto it = samples.find(name); it != samples.end()) {
        const auto x = quiet(it->second, a), y = quiet(it->second, b);
        if (!x.empty() && !y.empty())
          row(name, x, y);
      }
  };
  fmt::print("pass-through calls in the {} of {} seconds without hypervisor steal:\n",
             steal->quietSeconds(), steal->seconds());
  quietRows(kDirect, kProxy);
  // A/A: the same calls on a second direct channel. Nothing is added, so the p99 column is the
  // measurement's own spread at this many calls.
  fmt::print("A/A, a second direct channel in place of the proxy (nothing added):\n");
  header("direct", "direct2", "diff");
  for (const char* name : pass_through)
    if (auto it = samples.find(name); it != samples.end())
      row(name, it->second.us[kDirect], it->second.us[kControl]);
  fmt::print("A/A in the seconds without hypervisor steal:\n");
  quietRows(kDirect, kControl);
  if (!o.hook_dir.empty()) {
    std::filesystem::remove(o.hook_dir + "/bench.json");
    std::filesystem::remove(socket);  // the hook server's; false if it is gone already
  }
  return 0;
} catch (const std::exception& e) {
  fmt::print(stderr, "koord_bench_runtime_proxy: {}\n", e.what());
  return 1;
}
