// One collection round of the koordlet's usage metrics: node CPU and memory from /proc, pod,
// container and host-application CPU and memory from their cgroups, BE usage, and system usage.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "koord/cgroup/kubepods_path.h"
#include "metriccache/metric_cache.h"
#include "statesinformer/host_application.h"
#include "statesinformer/pod_meta.h"

namespace koord::cgroup {
class ResourceExecutor;
}

namespace koord::roles::koordlet {

/// The kubelet's QoS tier directory a pod's cgroup lives under.
cgroup::QoSTier qosTierOf(apis::KubeQoS q);
/// The pod's cgroup directory (relative, per the executor's driver); an error for a bad UID.
kube::Expected<std::string> podCgroupDir(cgroup::CgroupDriver driver, const PodMeta& pod);

struct CollectStats {
  std::size_t pods_collected = 0;
  std::size_t containers_collected = 0;
  std::size_t host_apps_collected = 0;
  std::size_t errors = 0;
};

/// Not thread-safe: one round at a time (the advisor's timer). CPU usage is a rate, so the first
/// round after start (or after a pod appears) records counters only.
class ResourceCollector {
 public:
  ResourceCollector(const cgroup::ResourceExecutor& cgroups, std::filesystem::path proc_root,
                    metriccache::MetricCache& cache);

  /// Collects one round for `pods` at `now` (wall clock for the series, steady for the rates).
  CollectStats collect(const std::vector<PodMeta>& pods, metriccache::TimePoint now,
                       std::chrono::steady_clock::time_point steady_now);
  /// The same with the NodeSLO's host applications, keyed by name in the cache; system usage is
  /// then node - pods - host applications. Skipped entries are logged once per key and reason.
  CollectStats collect(const std::vector<PodMeta>& pods, const HostApplications& host_apps,
                       metriccache::TimePoint now,
                       std::chrono::steady_clock::time_point steady_now);

 private:
  struct Counter {
    std::uint64_t value = 0;
    std::chrono::steady_clock::time_point at{};
  };
  /// Cores over the interval since the last reading of `key`, nullopt on the first one or when a
  /// counter went backwards (a cgroup recreated under the same name).
  std::optional<double> rate(std::unordered_map<std::string, Counter>& counters,
                             const std::string& key, std::uint64_t nanos,
                             std::chrono::steady_clock::time_point at);
  void logOnce(const std::string& key, const std::string& message);
  template <typename Add>
  void collectBE(const std::vector<PodMeta>& pods, std::chrono::steady_clock::time_point steady_now,
                 Add& add);
  struct HostAppsUsage {
    double cpu = 0;
    double memory = 0;
    /// Every app read this round had a CPU rate (an app whose cgroup is absent uses nothing).
    bool all_cpu = true;
  };
  template <typename Add>
  HostAppsUsage collectHostApps(const HostApplications& host_apps,
                                std::chrono::steady_clock::time_point steady_now, Add& add,
                                CollectStats& stats);

  const cgroup::ResourceExecutor& cgroups_;
  std::filesystem::path proc_root_;
  metriccache::MetricCache& cache_;
  std::unordered_map<std::string, Counter> pod_cpu_;
  std::unordered_map<std::string, Counter> container_cpu_;
  std::unordered_map<std::string, Counter> tier_cpu_;
  /// By app name: the CPU counters of apps read last round, and every app with series in the
  /// cache, so a name dropped from the NodeSLO takes its series with it.
  std::unordered_map<std::string, Counter> host_app_cpu_;
  std::unordered_set<std::string> host_app_series_;
  /// Host-app key -> the error last logged for it; a key with no error this round is dropped.
  std::unordered_map<std::string, std::string> host_app_errors_;
  bool have_node_ticks_ = false;
  std::uint64_t node_busy_ticks_ = 0;
  std::chrono::steady_clock::time_point node_ticks_at_{};
  /// Object keys whose last error was logged, so a broken pod logs once, not every second.
  std::unordered_map<std::string, std::string> logged_errors_;
};

}  // namespace koord::roles::koordlet
