// The CPUBurst strategy's round (Koordinator's cpuburst plugin): for every pod not labelled LSE,
// LSR or BE, its containers with a CPU limit get the cfs burst the policy gives, and a throttled
// container's cfs quota is raised in steps while the node's share pool has room, lowered when not.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "koord/cgroup/cgroup_reader.h"
#include "qosmanager/cpuburst/burst_limiter.h"
#include "qosmanager/cpuburst/cfs_quota_burst.h"
#include "qosmanager/cpuburst/cpu_burst_policy.h"

namespace koord::cgroup {
class ResourceExecutor;
struct CpuTopology;
}  // namespace koord::cgroup

namespace koord::roles::koordlet {

struct StatesSnapshot;
struct PodMeta;
struct ContainerMeta;
namespace metriccache {
class MetricCache;
}

namespace qosmanager {

/// One container's quota change, for logs and tests.
struct CfsQuotaScale {
  std::string container;  // namespace/pod/container
  CfsOperation operation = CfsOperation::kRemain;
  std::int64_t from = 0;
  std::int64_t to = 0;
};

/// What a round did.
struct CPUBurstRound {
  bool ran = false;
  std::string skipped_because;
  NodeBurstState node_state = NodeBurstState::kUnknown;
  std::optional<double> share_pool_ratio;
  /// Pods the policy applied to this round.
  std::size_t pods = 0;
  /// cfs burst and cfs quota files whose value changed.
  std::size_t burst_written = 0;
  std::size_t quota_written = 0;
  /// Bursts lowered to the cgroup's quota: the kernel refuses a burst above it.
  std::size_t burst_capped = 0;
  /// The kernel has no cfs burst file (before Linux 5.14, or without the feature).
  bool burst_unsupported = false;
  std::vector<CfsQuotaScale> scaled;
  /// One message per failure, naming the pod or the file.
  std::vector<std::string> errors;
};

struct CPUBurstOptions {
  /// The strategy's interval: the node's usage is averaged over five of them, at most 10 s.
  std::chrono::milliseconds reconcile_interval{1000};
  /// The collectors' interval: a container's usage older than two of them is not used.
  std::chrono::milliseconds collect_interval{1000};
  /// A new limiter's initial fill in [0, 1); unset, a random value below one half.
  std::function<double()> limiter_init_ratio;
};

class CPUBurst {
 public:
  CPUBurst(const metriccache::MetricCache& cache, cgroup::ResourceExecutor& cgroups,
           const cgroup::CpuTopology& topology, CPUBurstOptions options);

  /// One round on `states` at `now`; one round at a time (the QoS manager's timer). Logs each
  /// distinct problem once until it changes, and a pod's bad annotation once until it changes.
  CPUBurstRound runOnce(const StatesSnapshot& states, std::chrono::system_clock::time_point now);

 private:
  void applyPod(const PodMeta& pod, const CPUBurstConfig& config, NodeBurstState node,
                std::chrono::system_clock::time_point now, CPUBurstRound& round);
  void applyCPUBurst(const PodMeta& pod, const std::string& pod_dir, const CPUBurstConfig& config,
                     CPUBurstRound& round);
  void applyCfsQuotaBurst(const PodMeta& pod, const std::string& pod_dir,
                          const CPUBurstConfig& config, NodeBurstState node,
                          std::chrono::system_clock::time_point now, CPUBurstRound& round);
  bool limiterAllows(const ContainerMeta& c, std::int64_t limit_milli, const CPUBurstConfig& config,
                     std::chrono::system_clock::time_point now);
  std::optional<double> throttled(const ContainerMeta& c, const std::string& dir,
                                  CPUBurstRound& round);
  std::optional<double> sharePoolRatio(const StatesSnapshot& states,
                                       std::chrono::system_clock::time_point now) const;
  void forgetUnseen();
  void report(const CPUBurstRound& round);

  const metriccache::MetricCache& cache_;
  cgroup::ResourceExecutor& cgroups_;
  const cgroup::CpuTopology& topology_;
  CPUBurstOptions options_;
  /// Per container ID, between rounds: the cpu.stat counters last read and the limiter. Entries
  /// of containers a round did not visit are dropped, so both stay as large as the node's pods.
  std::map<std::string, cgroup::CpuThrottling, std::less<>> throttle_;
  std::map<std::string, BurstLimiter, std::less<>> limiters_;
  std::set<std::string, std::less<>> seen_;
  /// Per pod key, its annotation's last error.
  std::map<std::string, std::string, std::less<>> pod_errors_;
  std::string last_problem_;
  bool unsupported_logged_ = false;
  bool capped_logged_ = false;
};

}  // namespace qosmanager
}  // namespace koord::roles::koordlet
