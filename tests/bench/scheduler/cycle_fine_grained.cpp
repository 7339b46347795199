// The cycle bench's --fine-grained mode: the Scheduler's own loop over nodes that report their
// CPU topology (NodeResourceTopology) and GPUs (Device), so that NodeNUMAResource and DeviceShare
// pay for their caches, filters and annotations as a real scheduler pays for them.
#include "cycle_fine_grained.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include "child_run.h"
#include "config/scheduler_config.h"
#include "framework/plugin_registry.h"
#include "koord/apis/device.h"
#include "koord/apis/device_allocation.h"
#include "koord/apis/extension.h"
#include "koord/apis/node_resource_topology.h"
#include "koord/apis/xpu_device_info.h"
#include "koord/cgroup/cpu_topology.h"
#include "koord/core/metrics.h"
#include "koord/kube/quantity.h"
#include "loop_figures.h"
#include "plugins/deviceshare/device.h"
#include "plugins/nodenumaresource/register.h"
#include "scheduler.h"
#include "scheduler/map_object_source.h"

namespace koord::bench::scheduler {

namespace {

using namespace koord::roles::scheduler;
namespace apis = koord::apis;
namespace kube = koord::kube;

constexpr std::string_view kNamespace = "bench";
constexpr int kSockets = 2;
constexpr int kCoresPerSocket = 32;
constexpr int kThreadsPerCore = 2;
constexpr int kCpus = kSockets * kCoresPerSocket * kThreadsPerCore;
constexpr int kGpus = 8;
constexpr std::int64_t kNodeMemory = 512LL << 30;
constexpr std::int64_t kGpuMemory = 80LL << 30;
constexpr std::int64_t kLsrMilliCpu = 4000;
constexpr std::int64_t kGpuRatio = 50;
// How long a run may take to bind everything, and how long it may go without binding anything.
constexpr std::chrono::seconds kRunLimit{300};
constexpr std::chrono::seconds kStallLimit{20};

enum class Kind { kLsr, kGpu, kPlain };
Kind kindOf(std::size_t i) {
  return i % 3 == 0 ? Kind::kLsr : i % 3 == 1 ? Kind::kGpu : Kind::kPlain;
}

// A: the default plugins. B: the same plus NodeNUMAResource and DeviceShare at the points the
// chart's koord-scheduler-config.yaml enables them.
std::string configText(const FineGrainedOptions& o, bool fine) {
  std::string text = fmt::format(
      "apiVersion: kubescheduler.config.k8s.io/v1\n"
      "kind: KubeSchedulerConfiguration\n"
      "parallelism: {}\n"
      "profiles:\n"
      "  - schedulerName: koord-scheduler\n",
      o.parallelism);
  if (!fine)
    return text;
  const std::string both = "[{name: NodeNUMAResource}, {name: DeviceShare}]";
  text += "    plugins:\n";
  for (const char* point : {"preFilter", "filter", "reserve"})
    text += fmt::format("      {}: {{enabled: {}}}\n", point, both);
  text +=
      "      score: {enabled: [{name: NodeNUMAResource, weight: 1}, "
      "{name: DeviceShare, weight: 1}]}\n"
      "      preBind: {enabled: [{name: DefaultPreBind}]}\n";
  return text;
}

// Bindings answer at once, on the scheduling thread; each is kept with the pod as bound (the
// plugins' annotations applied), for the checks and the informer's confirmations.
class BenchApi final : public SchedulerApi {
 public:
  const AnyObjectSource* objectSource(std::string_view key) const override {
    if (key == deviceshare::kDeviceSource)
      return &devices;
    if (key == nodenumaresource::kNodeResourceTopologySource)
      return &topologies;
    return nullptr;
  }
  void bindPod(std::shared_ptr<const PodInfo> pod, const std::string& node,
               ApiCallback done) const override {
    auto bound = std::make_shared<PodInfo>(*pod);
    bound->node_name = node;
    {
      std::lock_guard lock(mu);
      bindings.push_back(std::move(bound));
    }
    done({});
  }
  void patchPod(std::shared_ptr<const PodInfo>, boost::json::value,
                ApiCallback done) const override {
    done({});
  }
  void mergePatch(const kube::ResourceRef&, boost::json::value, ApiCallback done) const override {
    done({});
  }
  std::shared_ptr<const PodInfo> currentPod(const std::string& key) const override {
    auto it = pods.find(key);
    return it == pods.end() ? nullptr : it->second;
  }
  void reportScheduled(const PodInfo&, const std::string&, const std::string&) override {}
  void reportFailure(const PodInfo& pod, const std::string&, std::string_view,
                     const std::string& message, const std::string&) override {
    std::lock_guard lock(mu);
    if (failures++ == 0)
      first_failure = pod.key() + ": " + message;
  }

  testkit::MapObjectSource<apis::Device> devices;
  testkit::MapObjectSource<apis::NodeResourceTopology> topologies;
  std::unordered_map<std::string, std::shared_ptr<const PodInfo>> pods;
  mutable std::mutex mu;
  mutable std::vector<std::shared_ptr<PodInfo>> bindings;  // under mu
  std::size_t failures = 0;                                // under mu
  std::string first_failure;                               // under mu
};

// Linux's numbering on such a machine: the first thread of every core, then their siblings.
std::string cpuTopologyAnnotation() {
  apis::CPUTopology t;
  for (int cpu = 0; cpu < kCpus; ++cpu) {
    const int core = cpu % (kSockets * kCoresPerSocket);
    const int socket = core / kCoresPerSocket;
    t.detail.push_back({cpu, core % kCoresPerSocket, socket, socket});
  }
  return apis::formatCPUTopology(t);
}

std::shared_ptr<apis::NodeResourceTopology> makeTopology(const std::string& node,
                                                         const std::string& cpu_topology) {
  auto nrt = std::make_shared<apis::NodeResourceTopology>();
  nrt->name = node;
  nrt->uid = "nrt-" + node;
  nrt->annotations[std::string(apis::kAnnotationNodeCPUTopology)] = cpu_topology;
  nrt->topology_policies = {std::string(apis::kTopologyPolicyNone)};
  for (int numa = 0; numa < kSockets; ++numa) {
    apis::Zone zone;
    zone.name = apis::nodeZoneName(numa);
    zone.type = std::string(apis::kZoneTypeNode);
    const auto cpu = kube::Quantity::fromInt(kCpus / kSockets);
    const auto memory =
        kube::Quantity::fromInt(kNodeMemory / kSockets, kube::Quantity::Format::kBinarySI);
    zone.resources.push_back({"cpu", cpu, cpu, cpu});
    zone.resources.push_back({"memory", memory, memory, memory});
    nrt->zones.push_back(std::move(zone));
  }
  return nrt;
}

std::shared_ptr<apis::Device> makeDevice(const std::string& node) {
  auto d = std::make_shared<apis::Device>();
  d->name = node;
  d->uid = "dev-" + node;
  for (int minor = 0; minor < kGpus; ++minor) {
    apis::DeviceInfo gpu;
    gpu.type = std::string(apis::kDeviceTypeGPU);
    gpu.uuid = fmt::format("GPU-{}-{}", node, minor);
    gpu.minor = minor;
    gpu.health = true;
    gpu.resources = {{std::string(apis::kResourceGPUCore), kube::Quantity::fromInt(100)},
                     {std::string(apis::kResourceGPUMemory),
                      kube::Quantity::fromInt(kGpuMemory, kube::Quantity::Format::kBinarySI)},
                     {std::string(apis::kResourceGPUMemoryRatio), kube::Quantity::fromInt(100)}};
    const int numa = minor * kSockets / kGpus;
    gpu.topology = apis::DeviceTopology{numa, numa, fmt::format("pci0000:{:02x}", minor),
                                        fmt::format("0000:{:02x}:00.0", 0x10 + minor)};
    d->devices.push_back(std::move(gpu));
  }
  return d;
}

std::shared_ptr<PodInfo> makePod(std::size_t i) {
  auto p = std::make_shared<PodInfo>();
  p->namespace_ = std::string(kNamespace);
  p->name = fmt::format("pod-{:06}", i);
  p->uid = fmt::format("00000000-0000-0000-0003-{:012}", i);
  p->scheduler_name = "koord-scheduler";
  p->qos = apis::QoSClass::kLS;
  p->priority_class = apis::PriorityClass::kProd;
  p->labels[std::string(apis::kLabelPodQoS)] = "LS";
  switch (kindOf(i)) {
    case Kind::kLsr:
      p->qos = apis::QoSClass::kLSR;
      p->labels[std::string(apis::kLabelPodQoS)] = "LSR";
      p->requests.milli_cpu = kLsrMilliCpu;
      p->requests.memory = 8LL << 30;
      break;
    case Kind::kGpu:
      p->requests.milli_cpu = 1000;
      p->requests.memory = 4LL << 30;
      p->requests.scalar = {{std::string(apis::kResourceGPUCore), kGpuRatio},
                            {std::string(apis::kResourceGPUMemoryRatio), kGpuRatio}};
      break;
    case Kind::kPlain:
      p->requests.milli_cpu = 1000;
      p->requests.memory = 2LL << 30;
      break;
  }
  p->non_zero_requests = p->requests;
  p->limits = p->requests;
  return p;
}

struct RunResult {
  bool ok = false;
  char error[512] = {};
  char plugins[1024] = {};
  LoopFigures loop;
  std::size_t lsr = 0, lsr_bound_cpus = 0, lsr_whole_cores = 0;
  std::size_t gpu = 0, gpu_allocated = 0;
  std::size_t stray_annotations = 0;
  char first_failure[512] = {};
  /// B: each plugin's calls per sampled cycle (scheduler_plugin_execution_duration_seconds, CPU
  /// time over the worker threads), NodeNUMAResource then DeviceShare, and by extension point.
  std::size_t sampled_cycles = 0;
  double plugin_us[2] = {};
  char plugin_points[512] = {};
};

constexpr std::string_view kMeasuredPlugins[2] = {"NodeNUMAResource", "DeviceShare"};

// The value of label `name` in a series line's label set, empty when absent.
std::string_view labelOf(std::string_view labels, std::string_view name) {
  const std::string key = fmt::format("{}=\"", name);
  const auto at = labels.find(key);
  if (at == std::string_view::npos)
    return {};
  const auto begin = at + key.size();
  return labels.substr(begin, labels.find('"', begin) - begin);
}

// Reads the two plugins' series from the run's registry: the sampled cycles are those in which
// NodeNUMAResource's PreFilter was timed (once per cycle).
void readPluginCosts(const std::string& text, RunResult& out) {
  constexpr std::string_view kSeries = "scheduler_plugin_execution_duration_seconds_";
  std::vector<std::pair<std::string, double>> by_point[2];
  double sampled = 0;
  std::size_t pos = 0;
  while (pos < text.size()) {
    const auto end = std::min(text.find('\n', pos), text.size());
    const std::string_view line(text.data() + pos, end - pos);
    pos = end + 1;
    if (!line.starts_with(kSeries))
      continue;
    const auto open = line.find('{');
    const auto close = line.rfind('}');
    if (open == std::string_view::npos || close == std::string_view::npos)
      continue;
    const std::string_view kind = line.substr(kSeries.size(), open - kSeries.size());
    const std::string_view labels = line.substr(open, close - open);
    const double value = std::strtod(std::string(line.substr(close + 2)).c_str(), nullptr);
    const std::string_view plugin = labelOf(labels, "plugin");
    const std::string_view point = labelOf(labels, "extension_point");
    if (kind == "count" && plugin == kMeasuredPlugins[0] && point == "PreFilter")
      sampled += value;
    if (kind != "sum")
      continue;
    for (int i = 0; i < 2; ++i) {
      if (plugin != kMeasuredPlugins[i])
        continue;
      auto it = std::find_if(by_point[i].begin(), by_point[i].end(),
                             [&](const auto& e) { return e.first == point; });
      if (it == by_point[i].end())
        by_point[i].emplace_back(std::string(point), value);
      else
        it->second += value;
    }
  }
  out.sampled_cycles = static_cast<std::size_t>(sampled);
  if (sampled == 0)
    return;
  std::string detail;
  for (int i = 0; i < 2; ++i) {
    detail += fmt::format("{}{}:", i == 0 ? "" : "; ", kMeasuredPlugins[i]);
    for (const auto& [point, seconds] : by_point[i]) {
      const double us = seconds * 1e6 / sampled;
      out.plugin_us[i] += us;
      detail += fmt::format(" {} {:.1f}", point, us);
    }
  }
  copyText(out.plugin_points, sizeof out.plugin_points, detail);
}

RunResult fail(RunResult r, std::string_view why) {
  r.ok = false;
  copyText(r.error, sizeof r.error, why);
  return r;
}

// Whether `cpus` are whole physical cores of the bench's numbering (cpu c's sibling is c + 64).
bool wholeCores(const std::vector<int>& cpus) {
  const int half = kCpus / kThreadsPerCore;
  for (int c : cpus) {
    const int sibling = c < half ? c + half : c - half;
    if (!std::binary_search(cpus.begin(), cpus.end(), sibling))
      return false;
  }
  return true;
}

// What B's plugins wrote on a bound pod: an LSR pod's cpuset (4 CPUs, whole cores), a GPU pod's
// device allocation; nothing on the others.
void countAnnotations(const PodInfo& pod, std::size_t index, RunResult& out) {
  const auto status = pod.annotations.find(apis::kAnnotationResourceStatus);
  const auto devices = pod.annotations.find(apis::kAnnotationDeviceAllocated);
  switch (kindOf(index)) {
    case Kind::kLsr: {
      if (status == pod.annotations.end())
        return;
      // {"cpuset":"..."}: the list between the quotes after "cpuset".
      const std::string& text = status->second;
      const auto at = text.find("\"cpuset\":\"");
      if (at == std::string::npos)
        return;
      const auto begin = at + 10;
      auto cpus = cgroup::parseCpuList(text.substr(begin, text.find('"', begin) - begin));
      if (!cpus || static_cast<std::int64_t>(cpus->size()) * 1000 != kLsrMilliCpu)
        return;
      ++out.lsr_bound_cpus;
      out.lsr_whole_cores += wholeCores(*cpus) ? 1 : 0;
      return;
    }
    case Kind::kGpu:
      if (devices != pod.annotations.end() && apis::parseDeviceAllocations(devices->second))
        ++out.gpu_allocated;
      return;
    case Kind::kPlain:
      out.stray_annotations +=
          (status != pod.annotations.end()) + (devices != pod.annotations.end());
      return;
  }
}

RunResult runOnce(const FineGrainedOptions& o, bool fine) {
  using Clock = std::chrono::steady_clock;
  auto seconds = [](Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double>(b - a).count();
  };
  RunResult out;
  const PluginRegistry& registry = inTreeRegistry();
  auto cfg = config::parseSchedulerConfigText(configText(o, fine), registry);
  if (!cfg)
    return fail(out, "config: " + cfg.error().message);
  copyText(out.plugins, sizeof out.plugins, config::describe(*cfg));

  BenchApi api;
  metrics::Registry metrics_registry;
  const auto s0 = Clock::now();
  Scheduler loop(*cfg, registry, api, metrics_registry);
  const std::string cpu_topology = cpuTopologyAnnotation();
  for (std::size_t i = 0; i < o.nodes; ++i) {
    auto n = std::make_shared<Node>();
    n->name = fmt::format("node-{:05}", i);
    n->uid = "uid-" + n->name;
    n->labels = {{"kubernetes.io/hostname", n->name},
                 {"topology.kubernetes.io/zone", fmt::format("zone-{}", i % 3)}};
    n->allocatable.milli_cpu = kCpus * 1000;
    n->allocatable.memory = kNodeMemory;
    n->allocatable.allowed_pod_number = 256;
    n->allocatable.scalar = {{std::string(apis::kResourceGPUCore), 100 * kGpus},
                             {std::string(apis::kResourceGPUMemory), kGpuMemory * kGpus},
                             {std::string(apis::kResourceGPUMemoryRatio), 100 * kGpus}};
    n->capacity = n->allocatable;
    // The koordlet's reports come first, as on a node that has been up a while.
    if (fine) {
      api.topologies.set(n->name, makeTopology(n->name, cpu_topology));
      api.devices.set(n->name, makeDevice(n->name));
    }
    loop.onNodeAdd(std::move(n));
  }
  std::vector<std::shared_ptr<const PodInfo>> pods;
  pods.reserve(o.pods);
  std::unordered_map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < o.pods; ++i) {
    auto p = makePod(i);
    index.emplace(p->key(), i);
    api.pods.emplace(p->key(), p);
    out.lsr += kindOf(i) == Kind::kLsr;
    out.gpu += kindOf(i) == Kind::kGpu;
    pods.push_back(std::move(p));
  }
  out.loop.setup_s = seconds(s0, Clock::now());

  const auto f0 = Clock::now();
  for (const auto& p : pods) {
    loop.onPodAdd(*p);
    loop.onPendingPodAdd(p);
  }
  out.loop.feed_s = seconds(f0, Clock::now());

  std::vector<double> cycle_us;
  cycle_us.reserve(o.pods + o.pods / 4);
  const double cpu0 = processCpuSeconds();
  const auto t0 = Clock::now();
  auto progress = t0;
  std::size_t seen = 0;
  for (;;) {
    {
      std::lock_guard lock(api.mu);
      if (api.bindings.size() >= o.pods)
        break;
      if (api.bindings.size() != seen) {
        seen = api.bindings.size();
        progress = Clock::now();
      }
    }
    const auto now = Clock::now();
    if (now - t0 > kRunLimit || now - progress > kStallLimit)
      break;
    if (loop.queue().sizes().active == 0) {
      loop.queue().flushBackoffQCompleted();
      if (loop.queue().sizes().active == 0) {
        loop.queue().flushUnschedulableQLeftover();
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
      continue;
    }
    const auto c0 = Clock::now();
    loop.scheduleOne();
    cycle_us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - c0).count());
    ++out.loop.cycles;
  }
  out.loop.schedule_s = seconds(t0, Clock::now());
  out.loop.schedule_cpu_s = processCpuSeconds() - cpu0;
  if (fine)
    readPluginCosts(metrics_registry.render(), out);

  std::vector<std::shared_ptr<PodInfo>> bindings;
  {
    std::lock_guard lock(api.mu);
    bindings = api.bindings;
    out.loop.failures = api.failures;
    copyText(out.first_failure, sizeof out.first_failure, api.first_failure);
  }
  out.loop.bound = bindings.size();
  for (const auto& b : bindings)
    countAnnotations(*b, index.at(b->key()), out);

  // The informer's confirmations (the bound pods, annotations and all), timed apart.
  const auto k0 = Clock::now();
  for (const auto& b : bindings) {
    const auto& old_pod = pods[index.at(b->key())];
    loop.onPodUpdate(*old_pod, *b);
    loop.onPendingPodDelete(*old_pod);
    loop.onAssignedPodAdd(b);
  }
  out.loop.confirm_s = seconds(k0, Clock::now());

  setCyclePercentiles(cycle_us, out.loop);
  out.ok = true;
  return out;
}

RunResult runInChild(const FineGrainedOptions& o, bool fine) {
  auto r = runInChildProcess<RunResult>([&] { return runOnce(o, fine); });
  return r ? *r : fail(RunResult{}, r.error().message);
}

bool check(const FineGrainedOptions& o, bool fine, const RunResult& r) {
  bool good = true;
  auto expect = [&](bool ok, std::string_view what) {
    if (!ok) {
      fmt::print("  CHECK FAILED: {}\n", what);
      good = false;
    }
  };
  expect(r.loop.bound == o.pods, fmt::format("{} of {} pods bound", r.loop.bound, o.pods));
  expect(r.loop.failures == 0, fmt::format("{} scheduling failures (first: {})", r.loop.failures,
                                           std::string_view(r.first_failure)));
  if (fine) {
    expect(r.lsr_bound_cpus == r.lsr, fmt::format("{} of {} LSR pods bound to {} CPUs",
                                                  r.lsr_bound_cpus, r.lsr, kLsrMilliCpu / 1000));
    expect(r.lsr_whole_cores == r.lsr,
           fmt::format("{} of {} LSR pods on whole cores", r.lsr_whole_cores, r.lsr));
    expect(r.gpu_allocated == r.gpu,
           fmt::format("{} of {} GPU pods with a device allocation", r.gpu_allocated, r.gpu));
  }
  expect(r.stray_annotations == 0,
         fmt::format("{} annotations on pods that asked for neither", r.stray_annotations));
  return good;
}

void printRun(const FineGrainedOptions& o, std::string_view label, const RunResult& r) {
  printLoopRun(o.pods, label, r.loop);
  if (r.sampled_cycles > 0) {
    fmt::print("  in the plugins ({} sampled cycles): {:.1f} us/pod, {:.1f} + {:.1f} ({})\n",
               r.sampled_cycles, r.plugin_us[0] + r.plugin_us[1], r.plugin_us[0], r.plugin_us[1],
               std::string_view(r.plugin_points));
  }
}

}  // namespace

int runFineGrained(const FineGrainedOptions& o) {
  fmt::print(
      "koord scheduler loop, fine-grained (in process): {} nodes ({} sockets x {} cores x {} "
      "threads, {} GPUs of {} GiB), {} pods, parallelism {}, {} rounds\n"
      "  pods: a third LSR ({} CPUs), a third GPU-sharing (gpu-core and gpu-memory-ratio {}), a "
      "third plain (1 CPU)\n"
      "  A: the default plugins; B: with NodeNUMAResource and DeviceShare (NRT and Device per "
      "node)\n",
      o.nodes, kSockets, kCoresPerSocket, kThreadsPerCore, kGpus, kGpuMemory >> 30, o.pods,
      o.parallelism, o.rounds, kLsrMilliCpu / 1000, kGpuRatio);
  std::vector<RunResult> without, with;
  bool good = true;
  for (int round = 0; round < o.rounds; ++round) {
    for (bool fine : {false, true}) {
      if (!(fine ? o.run_with : o.run_without))
        continue;
      RunResult r = runInChild(o, fine);
      if (!r.ok) {
        fmt::print(stderr, "{}: {}\n", fine ? "B" : "A", r.error);
        return 1;
      }
      if (round == 0)
        fmt::print("  {} profile: {}\n", fine ? "B" : "A", r.plugins);
      printRun(o, fmt::format("round {} {}", round + 1, fine ? "B (fine)" : "A (plain)"), r);
      good = check(o, fine, r) && good;
      std::fflush(stdout);
      (fine ? with : without).push_back(r);
    }
  }
  if (!without.empty() && !with.empty()) {
    std::vector<LoopFigures> a, b;
    for (const auto& r : without)
      a.push_back(r.loop);
    for (const auto& r : with)
      b.push_back(r.loop);
    printLoopTable(a, b, o.pods, 30);
    fmt::print("{:<6} {:>12} {:>18} {:>12}\n", "round", "B plugins us", "NodeNUMAResource",
               "DeviceShare");
    for (std::size_t i = 0; i < with.size(); ++i) {
      fmt::print("{:<6} {:>12.1f} {:>18.1f} {:>12.1f}\n", i + 1,
                 with[i].plugin_us[0] + with[i].plugin_us[1], with[i].plugin_us[0],
                 with[i].plugin_us[1]);
    }
    fmt::print(
        "(B plugins: both plugins' calls per pod, CPU time over the worker threads, from "
        "scheduler_plugin_execution_duration_seconds in the cycles it samples; the bar: within "
        "30 us/pod)\n");
  }
  if (!good)
    fmt::print("some checks failed\n");
  return good ? 0 : 1;
}

}  // namespace koord::bench::scheduler
