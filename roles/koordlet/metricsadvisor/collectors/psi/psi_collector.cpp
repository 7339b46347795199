#include <array>
#include <string>
#include <unordered_map>
#include <vector>

#include "koord/cgroup/kubepods_path.h"
#include "koord/cgroup/resource_executor.h"
#include "koord/core/log.h"
#include "koordlet_options.h"
#include "metriccache/metric_cache.h"
#include "metricsadvisor/collectors/psi/psi_collector_spec.h"
#include "metricsadvisor/collectors/psi/psi_gauges.h"
#include "metricsadvisor/resource_collector.h"
#include "statesinformer/states_snapshot.h"

namespace koord::roles::koordlet::metricsadvisor {

namespace {

namespace mc = metriccache;

struct CacheKinds {
  std::array<mc::MetricKind, 6> avg10;  // cpu some/full, mem some/full, io some/full
  mc::MetricKind cpu_full_supported;
};

constexpr CacheKinds kPodKinds{
    {mc::MetricKind::kPodPSICPUSome, mc::MetricKind::kPodPSICPUFull, mc::MetricKind::kPodPSIMemSome,
     mc::MetricKind::kPodPSIMemFull, mc::MetricKind::kPodPSIIOSome, mc::MetricKind::kPodPSIIOFull},
    mc::MetricKind::kPodPSICPUFullSupported};
constexpr CacheKinds kContainerKinds{
    {mc::MetricKind::kContainerPSICPUSome, mc::MetricKind::kContainerPSICPUFull,
     mc::MetricKind::kContainerPSIMemSome, mc::MetricKind::kContainerPSIMemFull,
     mc::MetricKind::kContainerPSIIOSome, mc::MetricKind::kContainerPSIIOFull},
    mc::MetricKind::kContainerPSICPUFullSupported};
constexpr CacheKinds kNodeKinds{{mc::MetricKind::kNodePSICPUSome, mc::MetricKind::kNodePSICPUFull,
                                 mc::MetricKind::kNodePSIMemSome, mc::MetricKind::kNodePSIMemFull,
                                 mc::MetricKind::kNodePSIIOSome, mc::MetricKind::kNodePSIIOFull},
                                mc::MetricKind::kNodePSICPUFullSupported};

constexpr cgroup::Resource kPressureFiles[] = {cgroup::Resource::kCpuPressure,
                                               cgroup::Resource::kMemoryPressure,
                                               cgroup::Resource::kIOPressure};

class PSICollector final : public Collector {
 public:
  explicit PSICollector(const CollectorContext& context)
      : cgroups_(context.cgroups),
        unified_({context.cgroups.root().root / "unified", cgroup::CgroupVersion::kV2,
                  context.cgroups.root().driver}),
        proc_root_(context.options.proc_root_dir),
        cache_(context.cache),
        gauges_(context.metrics, context.options.node_name) {}

  void collect(const StatesSnapshot& states, std::chrono::system_clock::time_point now,
               std::chrono::steady_clock::time_point) override {
    if (!states.synced || states.pods == nullptr)
      return;
    ++round_;
    samples_.clear();
    // The node's own pressure (/proc/pressure), in the cache beside the pods' (Koordinator has
    // no gauge for it).
    if (auto node = readNodePSI(proc_root_); node) {
      node_error_.clear();
      addSamples(kNodeKinds, "", *node, now);
    } else {
      logError(node_error_, "node", node.error().message);
    }
    if (const cgroup::ResourceExecutor* source = pickSource()) {
      const auto driver = cgroups_.root().driver;
      for (const PodMeta& pod : *states.pods)
        collectPod(*source, driver, pod, now);
    }
    if (!samples_.empty()) {
      const auto summary = cache_.appendAll(samples_);
      if (summary.rejected > 0)
        KOORD_VLOG(4, "psi collector: {} samples refused by the metric cache", summary.rejected);
    }
    sweep();
  }

 private:
  struct PodState {
    std::string name, namespace_;
    std::uint64_t round = 0;
    std::string error;
  };
  struct ContainerState {
    std::string label_id, name, pod_uid, pod_name, pod_namespace;
    std::uint64_t round = 0;
    std::string error;
  };

  static PSIObjectLabels podLabels(const std::string& uid, const PodState& s) {
    return {uid, s.name, s.namespace_, {}, {}};
  }
  static PSIObjectLabels containerLabels(const ContainerState& s) {
    return {s.pod_uid, s.pod_name, s.pod_namespace, s.label_id, s.name};
  }

  // Where the pressure files are: the executor's own tree on v2; on v1 cpuacct when the kernel
  // puts them there, else the cgroup2 mount of a hybrid host. Asked each round (three stats) so
  // a kubepods made after start is found; logged when the answer changes.
  const cgroup::ResourceExecutor* pickSource() {
    if (cgroups_.root().version == cgroup::CgroupVersion::kV2)
      return &cgroups_;
    const std::string kubepods = cgroup::kubepodsDir(cgroups_.root().driver);
    auto has = [&](const cgroup::ResourceExecutor& e) {
      for (auto r : kPressureFiles) {
        std::error_code ec;
        if (!std::filesystem::exists(e.pathOf(kubepods, r), ec))
          return false;
      }
      return true;
    };
    const cgroup::ResourceExecutor* source = has(cgroups_)   ? &cgroups_
                                             : has(unified_) ? &unified_
                                                             : nullptr;
    const int state = source == nullptr ? 0 : source == &cgroups_ ? 1 : 2;
    if (state != source_state_) {
      if (source == nullptr) {
        KOORD_LOG_WARNING(
            "psi collector: neither {} nor {} exists; pod and container PSI are not collected",
            cgroups_.pathOf(kubepods, cgroup::Resource::kCpuPressure).string(),
            unified_.pathOf(kubepods, cgroup::Resource::kCpuPressure).string());
      } else {
        KOORD_LOG_INFO(
            "psi collector: reading pressure files under {}",
            source->pathOf(kubepods, cgroup::Resource::kCpuPressure).parent_path().string());
      }
      source_state_ = state;
    }
    return source;
  }

  void logError(std::string& last, std::string_view key, const std::string& message) {
    if (last != message) {
      KOORD_LOG_WARNING("psi collector: {}: {}", key, message);
      last = message;
    }
  }

  void addSamples(const CacheKinds& kinds, std::string_view key, const PSIByResource& psi,
                  mc::TimePoint now) {
    const PSIStats* stats[] = {&psi.cpu, &psi.mem, &psi.io};
    for (std::size_t r = 0; r < 3; ++r) {
      samples_.push_back({kinds.avg10[2 * r], key, now, stats[r]->some.avg10});
      samples_.push_back({kinds.avg10[2 * r + 1], key, now, stats[r]->full.avg10});
    }
    samples_.push_back({kinds.cpu_full_supported, key, now, psi.cpu.full_supported ? 1.0 : 0.0});
  }

  void collectPod(const cgroup::ResourceExecutor& source, cgroup::CgroupDriver driver,
                  const PodMeta& pod, mc::TimePoint now) {
    auto [it, inserted] = pods_.try_emplace(pod.uid);
    PodState& st = it->second;
    if (inserted) {
      st.name = pod.name;
      st.namespace_ = pod.namespace_;
    }
    st.round = round_;
    auto dir = podCgroupDir(driver, pod);
    if (!dir) {
      logError(st.error, pod.key(), dir.error().message);
      return;
    }
    auto psi = readPSI(source, *dir);
    if (!psi) {
      // A pod whose cgroup is not made yet or already gone is not worth a warning.
      if (pod.isRunning())
        logError(st.error, pod.key(), psi.error().message);
      gauges_.dropPod(it->first);
      return;
    }
    st.error.clear();
    gauges_.setPod(podLabels(it->first, st), *psi);
    addSamples(kPodKinds, it->first, *psi, now);
    for (const ContainerMeta& c : pod.containers) {
      if (c.id.empty())
        continue;
      collectContainer(source, driver, pod, *dir, c, now);
    }
  }

  void collectContainer(const cgroup::ResourceExecutor& source, cgroup::CgroupDriver driver,
                        const PodMeta& pod, const std::string& pod_dir, const ContainerMeta& c,
                        mc::TimePoint now) {
    auto [it, inserted] = containers_.try_emplace(c.id);
    ContainerState& st = it->second;
    if (inserted) {
      st.label_id = c.runtime + "://" + c.id;
      st.name = c.name;
      st.pod_uid = pod.uid;
      st.pod_name = pod.name;
      st.pod_namespace = pod.namespace_;
    }
    st.round = round_;
    auto dir = cgroup::containerDir(driver, pod_dir, c.runtime, c.id);
    if (!dir) {
      logError(st.error, pod.key() + "/" + c.name, dir.error().message);
      return;
    }
    auto psi = readPSI(source, *dir);
    if (!psi) {
      if (pod.isRunning())
        logError(st.error, pod.key() + "/" + c.name, psi.error().message);
      gauges_.dropContainer(st.label_id);
      return;
    }
    st.error.clear();
    gauges_.setContainer(containerLabels(st), *psi);
    addSamples(kContainerKinds, it->first, *psi, now);
  }

  void removeCached(const CacheKinds& kinds, std::string_view key) {
    for (auto kind : kinds.avg10)
      cache_.removeSeries(kind, key);
    cache_.removeSeries(kinds.cpu_full_supported, key);
  }

  // Pods and containers not seen this round left the node: their series and state go.
  void sweep() {
    for (auto it = pods_.begin(); it != pods_.end();) {
      if (it->second.round == round_) {
        ++it;
        continue;
      }
      gauges_.dropPod(it->first);
      removeCached(kPodKinds, it->first);
      it = pods_.erase(it);
    }
    for (auto it = containers_.begin(); it != containers_.end();) {
      if (it->second.round == round_) {
        ++it;
        continue;
      }
      gauges_.dropContainer(it->second.label_id);
      removeCached(kContainerKinds, it->first);
      it = containers_.erase(it);
    }
  }

  const cgroup::ResourceExecutor& cgroups_;
  const cgroup::ResourceExecutor unified_;
  const std::filesystem::path proc_root_;
  std::string node_error_;
  mc::MetricCache& cache_;
  PSIGauges gauges_;
  std::unordered_map<std::string, PodState> pods_;              // by pod UID
  std::unordered_map<std::string, ContainerState> containers_;  // by container ID
  std::vector<mc::Sample> samples_;  // reused: keys borrow from the maps above
  std::uint64_t round_ = 0;
  int source_state_ = -1;  // 0 none, 1 the executor's tree, 2 the unified mount
};

}  // namespace

CollectorSpec psiCollector() {
  return {.name = "psi collector",
          .gate = "PSICollector",
          .interval = [](const KoordletOptions& o) { return o.psi_collector_interval; },
          .make = makeCollector<PSICollector>};
}

std::string psiMissingInterface(const std::filesystem::path& proc_root) {
  const auto path = proc_root / "pressure" / "cpu";
  std::error_code ec;
  return std::filesystem::exists(path, ec) ? std::string() : path.string();
}

}  // namespace koord::roles::koordlet::metricsadvisor
