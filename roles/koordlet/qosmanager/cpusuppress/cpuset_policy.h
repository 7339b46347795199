// The cpuset suppress policy: which CPUs the besteffort cgroup gets next, sized from the
// suppress value, grown slowly, kept off reserved and LSE CPUs, spread over NUMA nodes by cores.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "koord/apis/extension.h"
#include "koord/cgroup/cpu_topology.h"

namespace koord::roles::koordlet::qosmanager {

/// BE never gets fewer CPUs than this, however hard it is suppressed.
inline constexpr int kBEMinCPUSetCPUs = 2;

/// A pod's cpuset from its resource-status annotation, with its koord QoS label.
struct PodCPUSet {
  apis::QoSClass qos = apis::QoSClass::kNone;
  std::vector<int> cpus;
};

struct CPUSetSuppressInput {
  std::int64_t suppress_milli = 0;
  /// The besteffort cgroup's cpuset.cpus now; only its size matters (it bounds the growth).
  std::vector<int> current_be_cpus;
  /// Never given to BE: the node reservation's reservedCPUs and the system QoS cpuset when it is
  /// exclusive.
  std::vector<int> excluded_cpus;
  /// Pods that have a cpuset, in the states informer's order: where two name the same CPU the
  /// later one decides its pool. LSE CPUs are excluded, LSR CPUs form their own pool.
  std::vector<PodCPUSet> pod_cpusets;
};

/// How many CPUs BE gets: ceil(suppress cores) raised to kBEMinCPUSetCPUs, then capped at
/// ceil(10% of the node's CPUs) more than it has now (the cap comes last, as in Koordinator, so
/// growing from fewer than 2 CPUs on a small node can stay below 2). Shrinking is never limited:
/// protecting LS pods comes first.
int targetBECPUCount(std::int64_t suppress_milli, std::size_t current_count,
                     std::size_t node_cpu_count);

/// The next besteffort cpuset, sorted. The target count is split between the LSR pool and the
/// other (LS) pool in proportion to their sizes (the LSR share rounded down); each pool is
/// filled by selectSpreadCPUs. Koordinator's quirks are kept: a pool too small for its share
/// contributes nothing (so the result may hold fewer CPUs than the target, even one), and an
/// empty result means "write nothing, keep the current cpuset" (as when every CPU is excluded).
std::vector<int> nextBECPUSet(const cgroup::CpuTopology& topology, const CPUSetSuppressInput& in);

/// Picks `count` CPUs from `candidates`, in the order picked: CPUs are grouped by (NUMA node,
/// socket), groups ordered largest first (ties: lowest first CPU), each group by (core, cpu).
/// Hyper-thread sibling pairs are taken first, one pair per group in turn, then single CPUs the
/// same way, so BE is spread across NUMA nodes while stacked on whole cores. Empty when there
/// are fewer candidates than `count`.
std::vector<int> selectSpreadCPUs(int count, std::span<const cgroup::CpuInfo> candidates);

}  // namespace koord::roles::koordlet::qosmanager
