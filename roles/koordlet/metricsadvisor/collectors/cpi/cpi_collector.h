// The CPI collector's round (Koordinator's performance collector, CPI half): each container's
// cycles and instructions counted in its perf_event cgroup over one window, into the metric
// cache and onto koordlet_container_cpi. Hosts without a PMU or the cgroup are told apart once.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <filesystem>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "koord/cgroup/resource_executor.h"
#include "metriccache/metric_cache.h"
#include "metricsadvisor/collectors/cpi/cgroup_cpi_counters.h"
#include "metricsadvisor/collectors/cpi/cpi_gauges.h"
#include "metricsadvisor/collectors/cpi/perf_event_api.h"
#include "statesinformer/pod_meta.h"

namespace koord::roles::koordlet::metricsadvisor {

/// The most perf fds one round holds, whatever the fd limit.
inline constexpr std::size_t kMaxCPIFds = 16384;
/// kMaxCPIFds, or half the soft RLIMIT_NOFILE when that is less: the rest of the koordlet keeps
/// the other half.
std::size_t defaultCPIFdBudget();

struct CPICollectorConfig {
  /// -sys-root-dir: devices/system/cpu/online, and bus/event_source/devices for the log line.
  std::filesystem::path sys_root = "/sys";
  cgroup::CgroupRoot cgroup_root;
  std::string node_name;
  /// -collect-cpi-timewindow.
  std::chrono::milliseconds window{10000};
  /// Perf fds a round may hold: two per container per online CPU, plus the container's cgroup
  /// directory while its counters are opened. Containers beyond it wait for a later round.
  std::size_t max_fds = kMaxCPIFds;
};

/// Waits out the counting window; false when the koordlet is stopping (nothing is published).
using CPIWindowWait = std::function<bool(std::chrono::milliseconds window)>;

struct CPIRoundReport {
  /// False once the host was found unable to count (no PMU, no perf_event cgroup, no permission).
  bool available = true;
  /// Containers with an ID on the pods listed, and those measured.
  std::size_t containers = 0;
  std::size_t measured = 0;
  /// Left for a later round by the fd bound (or the process's fd limit).
  std::size_t left_out = 0;
  /// Perf fds held over the window.
  std::size_t fds = 0;
  std::size_t errors = 0;
  bool stopped = false;
};

/// Not thread-safe: one round at a time (unavailable() may be asked from any thread).
class CPICollector {
 public:
  CPICollector(CPICollectorConfig config, PerfEventApi& api, metriccache::MetricCache& cache,
               metrics::Registry& registry);

  /// Opens every container's counters (as many as the fd bound allows, starting where the last
  /// cut round stopped), waits the window, reads and closes them, then publishes: samples
  /// stamped now + window. The first round checks the host; a host that cannot count is
  /// logged once and every later round returns at once.
  CPIRoundReport round(const std::vector<PodMeta>& pods, metriccache::TimePoint now,
                       const CPIWindowWait& wait);

  bool unavailable() const { return unavailable_.load(std::memory_order_relaxed); }

 private:
  struct Target {
    const PodMeta* pod;
    const ContainerMeta* container;
  };
  struct Opened {
    Target target;
    CgroupCPICounters counters;
  };
  /// Opens the targets' counters, as many as the bound allows from offset_; nullopt (all
  /// closed) when the kernel refuses for the whole host.
  std::optional<std::vector<Opened>> openAll(const std::vector<Target>& targets,
                                             std::span<const int> cpus, CPIRoundReport& report);
  std::vector<std::string> missingOnHost();
  void markUnavailable(const std::string& why);
  void logOnce(const std::string& key, const std::string& message);
  void forget(const std::unordered_set<std::string>& listed);

  CPICollectorConfig config_;
  std::filesystem::path perf_root_;
  PerfEventApi& api_;
  metriccache::MetricCache& cache_;
  CPIGauges gauges_;
  std::atomic<bool> unavailable_{false};
  bool checked_ = false;
  /// Where the next round starts when the last one was cut short, so every container gets its turn.
  std::size_t offset_ = 0;
  std::string bound_message_;
  /// Container ID (or "" for the node's CPU list) -> the error last logged for it.
  std::unordered_map<std::string, std::string> errors_;
  /// Container IDs with series in the cache.
  std::unordered_set<std::string> cached_;
};

/// The perf_event cgroup hierarchy: <root>/perf_event on v1, the unified root on v2.
std::filesystem::path perfEventCgroupRoot(const cgroup::CgroupRoot& root);
/// For the feature probe: <sys_root>/bus/event_source/devices/cpu when no CPU PMU is registered
/// there (a hybrid core's cpu_core or an Arm PMU counts as one), else the perf_event cgroup when
/// it is not mounted; "" when both are there.
std::string cpiMissingInterface(const std::filesystem::path& sys_root,
                                const cgroup::CgroupRoot& root);

}  // namespace koord::roles::koordlet::metricsadvisor
