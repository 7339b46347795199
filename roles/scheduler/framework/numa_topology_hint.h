// NUMA alignment across plugins (Koordinator's frameworkext/topologymanager): the hint type, the
// provider interface NodeNUMAResource and DeviceShare implement, and the per-node affinity store.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cycle_state.h"
#include "koord/core/string_map.h"
#include "node_info.h"
#include "pod_info.h"
#include "status.h"

namespace koord::roles::scheduler {

/// NUMA node ids as bits (the kubelet's and Koordinator's 64-bit bitmask).
using NumaNodeMask = std::uint64_t;

/// A set of NUMA nodes a resource could come from, and whether that set is one of the
/// narrowest that would do (the kubelet's TopologyHint). affinity 0 is "any NUMA node" (the
/// kubelet's nil mask): no provider names an empty set.
struct NUMATopologyHint {
  NumaNodeMask affinity = 0;
  bool preferred = false;
  /// Among hints of the same width and preference, the higher score wins.
  std::int64_t score = 0;

  friend bool operator==(const NUMATopologyHint&, const NUMATopologyHint&) = default;
};

/// One resource's hints from a provider. nullopt: no preference for it (Go's nil); an empty
/// list: no set of NUMA nodes can hold it.
struct NUMAResourceHints {
  std::string resource;
  std::optional<std::vector<NUMATopologyHint>> hints;

  friend bool operator==(const NUMAResourceHints&, const NUMAResourceHints&) = default;
};

/// One provider's hints; empty when it has no preference for any resource.
using NUMAProviderHints = std::vector<NUMAResourceHints>;

/// A plugin whose resources the topology manager aligns. Both calls run in Filter, in
/// parallel for different nodes: implementations read the cycle state and their own
/// (lock-guarded) caches only.
class NUMATopologyHintProvider {
 public:
  virtual ~NUMATopologyHintProvider() = default;
  /// The hints for the pod's resources on the node; empty when the plugin has nothing to say
  /// about this pod.
  virtual NUMAProviderHints podTopologyHints(const CycleState& state, const PodInfo& pod,
                                             const NodeInfo& node) const = 0;
  /// Whether the pod's resources fit within `affinity` on the node (Filter's check; Reserve
  /// allocates for real with the affinity the store keeps).
  virtual Status allocate(const CycleState& state, const NUMATopologyHint& affinity,
                          const PodInfo& pod, const NodeInfo& node) const = 0;
};

/// The affinity the topology manager chose for each node this cycle, for Reserve and Score to
/// allocate with. Filter writes it from several threads: the map has its own lock.
class NUMAAffinityStore final : public StateData {
 public:
  NUMAAffinityStore() = default;
  NUMAAffinityStore(const NUMAAffinityStore& other);
  std::unique_ptr<StateData> clone() const override;

  void set(std::string_view node, NUMATopologyHint hint) const;
  /// The empty hint (no affinity) for a node without one.
  NUMATopologyHint get(std::string_view node) const;

 private:
  /// False until the first set(): most cycles align nothing, and their Score and Reserve calls
  /// then take no lock.
  mutable std::atomic<bool> any_{false};
  mutable std::mutex mu_;
  mutable StringMap<NUMATopologyHint> by_node_;
};

/// Creates the cycle's store (PreFilter; a later PreFilter keeps the first one).
void initNUMAAffinityStore(CycleState& state);
/// Null when no PreFilter created one.
const NUMAAffinityStore* numaAffinityStore(const CycleState& state);

}  // namespace koord::roles::scheduler
