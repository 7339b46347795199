// NUMA topology hints (which sets of NUMA nodes could hold a pod's request, and which of those
// are preferred) and their merge under the four NUMA topology policies, as the kubelet's and
// Koordinator's topology managers do it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "framework/numa_topology_hint.h"
#include "plugins/nodenumaresource/cpu_topology.h"
#include "plugins/nodenumaresource/numa_policy.h"
#include "plugins/nodenumaresource/numa_resources.h"

namespace koord::roles::scheduler::nodenumaresource {

class ResourceAllocationScorer;

/// The framework's hint types, shared with DeviceShare and the topology manager: a set of NUMA
/// nodes (affinity 0 is "any NUMA node", the kubelet's nil mask), whether it is preferred, and
/// a score that decides among hints of one width and preference; per resource, nullopt for no
/// preference and an empty list for "no set of NUMA nodes can hold it"; per provider, empty for
/// no preference at all.
using NumaHint = scheduler::NUMATopologyHint;
using ResourceHints = scheduler::NUMAResourceHints;
using ProviderHints = scheduler::NUMAProviderHints;
static_assert(std::is_same_v<scheduler::NumaNodeMask, NumaMask>);

/// Hint generation enumerates every subset of the zones: past this many NUMA nodes it is
/// refused (no machine has that many).
inline constexpr int kMaxHintNumaNodes = 16;
/// The merge tries one hint of every resource of every provider in every combination; past
/// this many combinations it refuses rather than spin.
inline constexpr std::uint64_t kMaxHintPermutations = std::uint64_t{1} << 20;

inline constexpr std::string_view kReasonNumaAffinityError = "node(s) NUMA Topology affinity error";
inline constexpr std::string_view kReasonTooManyNumaNodes =
    "node(s) too many or invalid NUMA zones for NUMA topology hints";
inline constexpr std::string_view kReasonTooManyHintCombinations =
    "node(s) too many NUMA topology hint combinations";

/// One NUMA zone as hint generation sees it: what it has and what is still free (free already
/// trimmed to the CPUs a required bind policy may use).
struct NumaZone {
  int node = 0;
  NumaResources total;
  NumaResources free;
};

/// Koordinator's generateResourceHints for `requests` (the resources the pod names). For each
/// requested resource some zone names, a list of hints: every set of zones whose totals and free
/// amounts hold the request and in which no zone lacks it; memory and hugepages must fit
/// together. A hint is preferred when it is one of the narrowest for its resource (or always,
/// under Restricted). `scorer` (optional) scores each set by what its zones would hold. Requested
/// resources no zone names get no entry. Refused (nullopt) past kMaxHintNumaNodes zones, and for
/// a zone whose node is outside [0, kMaxNumaNodeId] or given twice.
std::optional<ProviderHints> generateNumaHints(std::span<const NumaZone> zones,
                                               const NumaResources& requests,
                                               const ResourceAllocationScorer* scorer,
                                               NumaTopologyPolicy policy);

struct NumaMergeResult {
  NumaHint hint;
  bool admit = false;
  /// Why not admitted ("" when admitted).
  std::string_view reason;
};

/// The topology manager's Merge and admission for a node whose NUMA nodes are `numa_nodes`:
/// None admits with no affinity; BestEffort picks the best merged hint (preferred first, then
/// narrowest, then highest score) and always admits; Restricted admits only a preferred one;
/// SingleNUMANode considers single-node hints only, reports a whole-machine result as "any", and
/// admits only a preferred one. Under NumaExclusive::kRequired a hint whose nodes conflict with
/// `statuses` (indexed by node id) is not preferred.
NumaMergeResult mergeNumaHints(NumaTopologyPolicy policy, NumaMask numa_nodes,
                               std::span<const ProviderHints> providers, NumaExclusive exclusive,
                               std::span<const NumaNodeStatus> statuses);

/// Koordinator's checkExclusivePolicy: under kRequired a multi-node hint may not use a node
/// single-NUMA pods hold, and a single-node hint may not use a shared node. False for the
/// "any" hint. Nodes past the end of `statuses` count as idle.
bool checkNumaExclusive(const NumaHint& hint, NumaExclusive exclusive,
                        std::span<const NumaNodeStatus> statuses);

/// Koordinator's mergeTopologyPolicy: the pod's policy when set, else the node's; nullopt when
/// both are set and differ (kErrNotMatchNUMATopology).
std::optional<NumaTopologyPolicy> mergeNumaTopologyPolicy(NumaTopologyPolicy node_policy,
                                                          NumaTopologyPolicy pod_policy);
inline constexpr std::string_view kErrNotMatchNUMATopology =
    "node(s) NUMA Topology policy not match";

}  // namespace koord::roles::scheduler::nodenumaresource
