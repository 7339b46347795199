// Choosing which logical CPUs a pod is bound to, as Koordinator's takeCPUs does: whole NUMA
// nodes, sockets and physical cores first for FullPCPUs, one CPU per core for SpreadByPCPUs,
// candidates ordered by the NUMA allocate strategy, and cores or NUMA nodes that pods of the
// same exclusive policy hold left out while others remain.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "koord/core/expected.h"
#include "plugins/nodenumaresource/cpu_set.h"
#include "plugins/nodenumaresource/cpu_topology.h"
#include "plugins/nodenumaresource/numa_policy.h"

namespace koord::roles::scheduler::nodenumaresource {

/// What pods hold of one CPU: how many share it and the exclusive policy of the last pod that
/// took it.
struct AllocatedCpu {
  std::uint32_t ref_count = 0;
  CpuExclusivePolicy exclusive = CpuExclusivePolicy::kNone;

  friend bool operator==(const AllocatedCpu&, const AllocatedCpu&) = default;
};
/// Indexed by CPU id; ids past the end hold nothing. An entry's exclusive policy marks its core
/// (PCPULevel) or NUMA node (NUMANodeLevel) whatever its count.
using AllocatedCpus = std::span<const AllocatedCpu>;

struct TakeCpusRequest {
  int num_cpus = 0;
  CpuBindPolicy bind_policy = CpuBindPolicy::kFullPCPUs;
  /// The pod's own exclusive policy: it avoids cores or NUMA nodes that pods of the same
  /// policy hold, and marks what it takes.
  CpuExclusivePolicy exclusive_policy = CpuExclusivePolicy::kNone;
  NumaAllocateStrategy numa_strategy = NumaAllocateStrategy::kMostAllocated;
};

inline constexpr std::string_view kErrNotEnoughCpus =
    "not enough cpus available to satisfy request";
inline constexpr std::string_view kErrFailedToAllocateCpus = "failed to allocate cpus";

/// Koordinator's takeCPUs: `request.num_cpus` CPUs out of `available` (CPUs the topology does
/// not have are ignored). The bind policy shapes the choice but is not enforced: FullPCPUs
/// falls back to partial cores when whole ones run out (a required policy is enforced by
/// allocateCpus, pod_allocate.h). `max_ref_count` above 1 lets CPUs be shared; less-shared
/// cores and CPUs then come first. Refused with kErrNotEnoughCpus when `available` holds fewer
/// CPUs than asked. A request of 0 CPUs gives the empty set.
Expected<CpuSet> takeCpus(const NodeCpuTopology& topology, int max_ref_count,
                          const CpuSet& available, AllocatedCpus allocated,
                          const TakeCpusRequest& request);

/// Koordinator's takePreferredCPUs: as many as possible out of `preferred ∩ available` (a
/// reservation's CPUs), the rest from the remaining available CPUs.
Expected<CpuSet> takePreferredCpus(const NodeCpuTopology& topology, int max_ref_count,
                                   const CpuSet& available, const CpuSet& preferred,
                                   AllocatedCpus allocated, const TakeCpusRequest& request);

/// The CPUs of `available` a required bind policy may use: for FullPCPUs those of cores whose
/// CPUs are all available, for SpreadByPCPUs the lowest available CPU of each core; other
/// policies leave `available` as it is.
CpuSet cpusUsableByRequiredPolicy(const NodeCpuTopology& topology, const CpuSet& available,
                                  CpuBindPolicy policy);
/// How many CPUs cpusUsableByRequiredPolicy would give, without building the set: the per-node
/// Filter check.
int countCpusUsableByRequiredPolicy(const NodeCpuTopology& topology, const CpuSet& available,
                                    CpuBindPolicy policy);
/// Whether `cpus` are whole cores (FullPCPUs) or one per core (SpreadByPCPUs); true for other
/// policies.
bool satisfiesRequiredPolicy(const NodeCpuTopology& topology, const CpuSet& cpus,
                             CpuBindPolicy policy);

}  // namespace koord::roles::scheduler::nodenumaresource
