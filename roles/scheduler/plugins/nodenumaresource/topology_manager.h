// The topology manager's admission on one node (Koordinator's topologymanager Admit): every hint
// provider's hints merged under the NUMA policy, the affinity kept, each provider checked in it.
#pragma once

#include <span>

#include "framework/cycle_state.h"
#include "framework/node_info.h"
#include "framework/numa_topology_hint.h"
#include "framework/pod_info.h"
#include "framework/status.h"
#include "plugins/nodenumaresource/cpu_topology.h"
#include "plugins/nodenumaresource/numa_policy.h"

namespace koord::roles::scheduler::nodenumaresource {

struct NumaAdmitRequest {
  /// The merged policy of node and pod; kNone admits without an affinity.
  NumaTopologyPolicy policy = NumaTopologyPolicy::kNone;
  /// The node's NUMA nodes (its zones).
  NumaMask numa_nodes = 0;
  NumaExclusive exclusive = NumaExclusive::kNone;
  /// Indexed by NUMA node id.
  std::span<const NumaNodeStatus> statuses;
};

/// Gathers each provider's podTopologyHints, merges them (mergeNumaHints); refuses with
/// "node(s) NUMA Topology affinity error" (Unschedulable) when the merge does not admit, else
/// stores the affinity for the node in the cycle's NUMAAffinityStore (when PreFilter made one)
/// and returns the first provider's allocate() refusal, or success.
Status admitNumaTopology(std::span<NUMATopologyHintProvider* const> providers,
                         const CycleState& state, const PodInfo& pod, const NodeInfo& node,
                         const NumaAdmitRequest& request);

}  // namespace koord::roles::scheduler::nodenumaresource
