// Koordinator's resource manager over one node: the NUMA hints a pod's request has there, the
// spreading of the request over the NUMA nodes of the chosen hint, and the CPUs it is bound to.
#pragma once

#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "koord/core/expected.h"
#include "plugins/nodenumaresource/cpu_accumulator.h"
#include "plugins/nodenumaresource/cpu_set.h"
#include "plugins/nodenumaresource/cpu_topology.h"
#include "plugins/nodenumaresource/node_allocation.h"
#include "plugins/nodenumaresource/numa_hint.h"
#include "plugins/nodenumaresource/numa_policy.h"
#include "plugins/nodenumaresource/numa_resources.h"
#include "plugins/nodenumaresource/pod_policy.h"

namespace koord::roles::scheduler::nodenumaresource {

inline constexpr std::string_view kErrInsufficientNumaResources =
    "insufficient resources on NUMA Node";

/// One node as the allocator reads it (Koordinator's TopologyOptions and NodeAllocation). The
/// caller holds the node's lock for as long as the view is used.
struct NodeNumaView {
  const NodeCpuTopology& topology;
  const NodeAllocation& allocation;
  /// CPUs no pod may be bound to (the kubelet's, the node reservation's, system QoS ones).
  const CpuSet& reserved_cpus;
  int max_ref_count = 1;
  /// The NUMA zones' resources, amplified by the node's ratios.
  std::span<const NumaNodeResources> zones;
  double cpu_amplification_ratio = 1;
  NumaAllocateStrategy numa_strategy = NumaAllocateStrategy::kLeastAllocated;
};

/// A pod's request on one node (Koordinator's ResourceOptions).
struct AllocateRequest {
  int num_cpus_needed = 0;
  bool request_cpu_bind = false;
  /// cpuBindPolicyOnNode's answer.
  CpuBindChoice bind;
  CpuExclusivePolicy exclusive = CpuExclusivePolicy::kNone;
  /// The requests NUMA placement weighs (cpu amplified for a bound pod on an amplified node).
  NumaResources requests;
  /// As the pod asked: what a bound pod's NUMA nodes are charged.
  NumaResources original_requests;
  /// A nominated reservation's CPUs, taken first and free to reuse.
  CpuSet preferred_cpus;
  /// Per NUMA node, what the nominated reservation holds and the pod may reuse.
  std::vector<NumaNodeResources> reusable;
  /// The merged hint; affinity 0 places nothing on NUMA nodes.
  NumaHint hint;
};

/// The node's CPUs the pod may be bound to: available CPUs, then those a required policy may
/// use. Koordinator's GetAvailableCPUs plus filterCPUsByRequiredCPUBindPolicy.
CpuSet bindableCpus(const NodeNumaView& node, const AllocateRequest& request);

/// The cheap Filter check before any allocation: enough available CPUs for the request, in the
/// shape a required policy needs (whole cores, or distinct cores). No heap for nodes of up to
/// 256 CPUs. Exactly allocateCpus' verdict when no NUMA hint and no preferred CPUs are involved.
bool cpusMayFit(const NodeNumaView& node, const AllocateRequest& request);

/// Koordinator's GetTopologyHints: the zones' free resources (CPU trimmed to what a required
/// bind policy may use), then generateNumaHints over `request.requests`. Refused with
/// kErrInsufficientNumaResources when the node reports no zones, and with
/// kReasonTooManyNumaNodes for zones generateNumaHints refuses.
Expected<ProviderHints> podNumaHints(const NodeNumaView& node, const AllocateRequest& request,
                                     const ResourceAllocationScorer* numa_scorer,
                                     NumaTopologyPolicy policy);

/// Koordinator's tryBestToDistributeEvenly over the hint's NUMA nodes: each resource split
/// evenly over the nodes, the node with the least free first so that the others take what it
/// cannot (whole physical cores per node for a required FullPCPUs). Refused ("Insufficient NUMA
/// cpu", ...) when the nodes cannot hold a resource some zone reports.
Expected<std::vector<NumaNodeResources>> distributeOverHint(const NodeNumaView& node,
                                                            const AllocateRequest& request);

/// Koordinator's allocateCPUSet: the CPUs for `request.num_cpus_needed`, per NUMA node of
/// `numa` when the hint placed the pod, then from anywhere; refused when they cannot all be
/// found, or when a required policy is not met.
Expected<CpuSet> allocateCpus(const NodeNumaView& node, const AllocateRequest& request,
                              std::span<const NumaNodeResources> numa);

/// Koordinator's Allocate: NUMA resources by the hint, then CPUs for a binding pod. The
/// allocation's uid, namespace and name are left for the caller.
Expected<PodAllocation> allocatePod(const NodeNumaView& node, const AllocateRequest& request);

}  // namespace koord::roles::scheduler::nodenumaresource
