// The BECPUSuppress strategy: every -cpu-suppress-interval-seconds, the CPU BE pods may use from
// the NodeSLO threshold and the latest usage, applied as the besteffort cpuset or CFS quota.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "koord/cgroup/cfs_quota_tree.h"
#include "koord/cgroup/cpu_topology.h"
#include "koord/core/metrics.h"
#include "koord/kube/error.h"
#include "qosmanager/cpusuppress/cpu_suppress_calculator.h"
#include "qosmanager/cpusuppress/suppress_strategy.h"

namespace koord::cgroup {
class ResourceExecutor;
}

namespace koord::roles::koordlet {

struct StatesSnapshot;
namespace metriccache {
class MetricCache;
}

namespace qosmanager {

/// What the last round decided, for logs, metrics and tests.
struct CPUSuppressRound {
  bool ran = false;
  std::string skipped_because;
  CPUSuppressPolicy policy = CPUSuppressPolicy::kCPUSet;
  SuppressResult calculation;
  /// Written values: the besteffort cpuset (cpuset policy) or cfs_quota_us (cfsQuota policy).
  std::vector<int> be_cpus;
  std::int64_t be_cfs_quota = 0;
};

class CPUSuppress {
 public:
  CPUSuppress(const metriccache::MetricCache& cache, cgroup::ResourceExecutor& cgroups,
              cgroup::CpuTopology topology, std::chrono::milliseconds collect_interval,
              metrics::Registry& registry);

  /// One round on `states` at `now`; one round at a time (the QoS manager's timer).
  CPUSuppressRound runOnce(const StatesSnapshot& states, std::chrono::system_clock::time_point now);

 private:
  void warnOnce(const kube::Error& error, std::string_view context = {});
  kube::Expected<void> applyBEQuota(std::int64_t quota);
  void recoverCFSQuota();
  void recoverCPUSet();
  bool writeBECPUSet(const std::vector<int>& cpus, const std::vector<int>& old_cpus);

  const metriccache::MetricCache& cache_;
  cgroup::ResourceExecutor& cgroups_;
  // The besteffort tier's quota with its pods' and containers' kept within it (v1 refuses a
  // tier quota below a child's, and BE pods with batch-cpu limits have quotas of their own).
  cgroup::CfsQuotaTree be_quota_tree_;
  cgroup::CpuTopology topology_;
  std::chrono::milliseconds collect_interval_;
  metrics::GaugeFamily& suppress_cores_;
  bool cfs_quota_recovered_ = false;
  bool cpuset_recovered_ = false;
  std::string last_error_;
  std::string last_write_error_;
  /// The node reservation's last parse error, logged once until it changes.
  std::string last_reservation_error_;
};

}  // namespace qosmanager
}  // namespace koord::roles::koordlet
