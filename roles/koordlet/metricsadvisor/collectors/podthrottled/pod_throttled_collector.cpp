#include <string>
#include <unordered_map>
#include <vector>

#include "koord/cgroup/cgroup_reader.h"
#include "koord/cgroup/kubepods_path.h"
#include "koord/cgroup/resource_executor.h"
#include "koord/core/log.h"
#include "koordlet_options.h"
#include "metriccache/metric_cache.h"
#include "metricsadvisor/collectors/podthrottled/pod_throttled_collector_spec.h"
#include "metricsadvisor/resource_collector.h"
#include "statesinformer/states_snapshot.h"

namespace koord::roles::koordlet::metricsadvisor {

namespace {

namespace mc = metriccache;

class PodThrottledCollector final : public Collector {
 public:
  explicit PodThrottledCollector(const CollectorContext& context)
      : cgroups_(context.cgroups), cache_(context.cache) {}

  void collect(const StatesSnapshot& states, std::chrono::system_clock::time_point now,
               std::chrono::steady_clock::time_point) override {
    if (!states.synced || states.pods == nullptr)
      return;
    ++round_;
    samples_.clear();
    const auto driver = cgroups_.root().driver;
    for (const PodMeta& pod : *states.pods) {
      auto dir = podCgroupDir(driver, pod);
      auto& [uid, st] = touch(pods_, pod.uid);
      if (!dir) {
        logError(st, pod.key(), dir.error().message);
        continue;
      }
      read(st, uid, mc::MetricKind::kPodCPUThrottled, *dir, pod, nullptr, now);
      for (const ContainerMeta& c : pod.containers) {
        if (c.id.empty())
          continue;
        auto& [id, cst] = touch(containers_, c.id);
        auto cdir = cgroup::containerDir(driver, *dir, c.runtime, c.id);
        if (!cdir) {
          logError(cst, nameOf(pod, &c), cdir.error().message);
          continue;
        }
        read(cst, id, mc::MetricKind::kContainerCPUThrottled, *cdir, pod, &c, now);
      }
    }
    if (!samples_.empty()) {
      const auto summary = cache_.appendAll(samples_);
      if (summary.rejected > 0) {
        KOORD_VLOG(4, "pod throttled collector: {} samples refused by the metric cache",
                   summary.rejected);
      }
    }
    sweep(pods_, mc::MetricKind::kPodCPUThrottled);
    sweep(containers_, mc::MetricKind::kContainerCPUThrottled);
  }

 private:
  struct Entry {
    cgroup::CpuThrottling last;
    bool have_last = false;
    std::uint64_t round = 0;
    std::string error;
  };
  using Entries = std::unordered_map<std::string, Entry>;

  Entries::value_type& touch(Entries& entries, const std::string& key) {
    auto& entry = *entries.try_emplace(key).first;
    entry.second.round = round_;
    return entry;
  }

  static void logError(Entry& e, std::string_view key, const std::string& message) {
    if (e.error != message) {
      KOORD_LOG_WARNING("pod throttled collector: {}: {}", key, message);
      e.error = message;
    }
  }

  static std::string nameOf(const PodMeta& pod, const ContainerMeta* c) {
    return c == nullptr ? pod.key() : pod.key() + "/" + c->name;
  }

  // `key` borrows the map's own key, which outlives the round's samples; `c` is null for the pod.
  void read(Entry& e, std::string_view key, mc::MetricKind kind, const std::string& dir,
            const PodMeta& pod, const ContainerMeta* c, mc::TimePoint now) {
    auto stat = cgroup::readCpuThrottling(cgroups_, dir);
    if (!stat) {
      // A cgroup not made yet or already gone is not worth a warning; the next reading that
      // works starts afresh.
      if (pod.isRunning())
        logError(e, nameOf(pod, c), stat.error().message);
      e.have_last = false;
      return;
    }
    e.error.clear();
    const cgroup::CpuThrottling& current = *stat;
    if (e.have_last) {
      if (auto ratio = cgroup::throttledRatio(e.last, current))
        samples_.push_back({kind, key, now, *ratio});
    }
    e.last = current;
    e.have_last = true;
  }

  void sweep(Entries& entries, mc::MetricKind kind) {
    for (auto it = entries.begin(); it != entries.end();) {
      if (it->second.round == round_) {
        ++it;
        continue;
      }
      cache_.removeSeries(kind, it->first);
      it = entries.erase(it);
    }
  }

  const cgroup::ResourceExecutor& cgroups_;
  mc::MetricCache& cache_;
  Entries pods_;        // by pod UID
  Entries containers_;  // by container ID
  std::vector<mc::Sample> samples_;
  std::uint64_t round_ = 0;
};

}  // namespace

CollectorSpec podThrottledCollector() {
  return {.name = "pod throttled collector",
          .gate = "",
          .interval = [](const KoordletOptions& o) { return o.collect_res_used_interval; },
          .make = makeCollector<PodThrottledCollector>};
}

}  // namespace koord::roles::koordlet::metricsadvisor
