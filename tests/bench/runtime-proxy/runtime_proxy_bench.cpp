// CRI calls made straight to containerd and through koord runtime-proxy in one run, alternating
// call by call: p50/p99 of each and what the proxy adds. With --hook-dir the bench also serves a
// RuntimeHookService (answering at once) and registers it, so hooked calls pay a real hook call.
// The pass-through figures are printed twice: all calls, and the calls of the seconds in which
// the hypervisor took no time from this VM (/proc/stat's steal), where the tail is the proxy's.
//
//   koord_bench_runtime_proxy --direct /run/containerd.sock --proxy /run/proxy.sock
//       [--image koord.local/busybox:local] [--iterations 2000] [--cycles 40] [--hook-dir DIR]
//       [--hook-server koord|grpcpp]
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

struct Samples {
  std::vector<double> direct;
  std::vector<double> proxy;
  // The second of the run each sample ended in (pass-through calls), for the steal filter.
  std::vector<int> direct_second;
  std::vector<int> proxy_second;
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
  if (!o.hook_dir.empty()) {
    const std::string socket = (std::filesystem::temp_directory_path() /
                                fmt::format("koord-bench-hooks-{}.sock", getpid()))
                                   .string();
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
  cri::RuntimeService::Stub* stubs[2] = {direct.get(), proxy.get()};
  std::map<std::string, Samples> samples;
  std::optional<koord::bench::StealSampler> steal;
  auto record = [&](const std::string& name, int which, double us) {
    auto& s = samples[name];
    (which == 0 ? s.direct : s.proxy).push_back(us);
    if (steal)
      (which == 0 ? s.direct_second : s.proxy_second).push_back(steal->second(Clock::now()));
  };

  // Warm both channels up before timing anything.
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

  // Pass-through calls, alternating direct and proxied.
  steal.emplace(Clock::now());
  for (int i = 0; i < o.iterations; ++i) {
    for (int which : {i % 2, 1 - i % 2}) {
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

  fmt::print("runtime-proxy bench: {} pass-through rounds, {} lifecycles each way, hooks {}\n",
             o.iterations, o.cycles,
             o.hook_dir.empty()
                 ? std::string("none")
                 : fmt::format("registered (answer at once, {} server)", o.hook_server));
  fmt::print("{:<18} {:>6} {:>11} {:>11} {:>11} {:>11} {:>11} {:>11}\n", "call", "n", "direct p50",
             "proxy p50", "added p50", "direct p99", "proxy p99", "added p99");
  const char* order[] = {"Version",         "ListContainers",  "ContainerStatus", "RunPodSandbox",
                         "CreateContainer", "StartContainer",  "StopContainer",   "RemoveContainer",
                         "StopPodSandbox",  "RemovePodSandbox"};
  for (const char* name : order) {
    auto it = samples.find(name);
    if (it == samples.end())
      continue;
    const auto& s = it->second;
    const double d50 = percentile(s.direct, 0.5), p50 = percentile(s.proxy, 0.5);
    const double d99 = percentile(s.direct, 0.99), p99 = percentile(s.proxy, 0.99);
    fmt::print("{:<18} {:>6} {:>9.0f}us {:>9.0f}us {:>9.0f}us {:>9.0f}us {:>9.0f}us {:>9.0f}us\n",
               name, s.direct.size(), d50, p50, p50 - d50, d99, p99, p99 - d99);
  }
  // The pass-through calls again, only those that ended in seconds without steal.
  fmt::print("pass-through calls in the {} of {} seconds without hypervisor steal:\n",
             steal->quietSeconds(), steal->seconds());
  for (const char* name : {"Version", "ListContainers", "ContainerStatus"}) {
    auto it = samples.find(name);
    if (it == samples.end())
      continue;
    auto quiet = [&](const std::vector<double>& us, const std::vector<int>& seconds) {
      std::vector<double> out;
      for (std::size_t i = 0; i < us.size() && i < seconds.size(); ++i)
        if (steal->quiet(seconds[i]))
          out.push_back(us[i]);
      return out;
    };
    const auto direct = quiet(it->second.direct, it->second.direct_second);
    const auto proxied = quiet(it->second.proxy, it->second.proxy_second);
    if (direct.empty() || proxied.empty())
      continue;
    const double d50 = percentile(direct, 0.5), p50 = percentile(proxied, 0.5);
    const double d99 = percentile(direct, 0.99), p99 = percentile(proxied, 0.99);
    fmt::print("{:<18} {:>6} {:>9.0f}us {:>9.0f}us {:>9.0f}us {:>9.0f}us {:>9.0f}us {:>9.0f}us\n",
               name, direct.size(), d50, p50, p50 - d50, d99, p99, p99 - d99);
  }
  if (!o.hook_dir.empty())
    std::filesystem::remove(o.hook_dir + "/bench.json");
  return 0;
} catch (const std::exception& e) {
  fmt::print(stderr, "koord_bench_runtime_proxy: {}\n", e.what());
  return 1;
}
