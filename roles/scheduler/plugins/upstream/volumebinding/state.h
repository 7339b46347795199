// VolumeBinding's cycle state: the pod's claims as PreFilter classified them (bound, to bind,
// with their candidate PVs), what Filter found per node, and what Reserve assumed for PreBind.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "framework/cycle_state.h"
#include "framework/node_info.h"
#include "koord/core/string_map.h"
#include "plugins/upstream/storage/storage_objects.h"
#include "plugins/upstream/volumebinding/matching.h"

namespace koord::roles::scheduler::upstream::volumebinding {

/// "VolumeBinding".
extern const StateKey kStateKey;

/// A claim bound to its volume: the volume's node affinity must hold on the node.
struct BoundClaim {
  std::string volume_name;
  /// nullopt: the PV does not exist (Filter answers an error, as 1.20).
  std::optional<VolumeRef> volume;
};

/// A WaitForFirstConsumer claim without a volume.
struct ClaimToBind {
  std::shared_ptr<const storage::PersistentVolumeClaim> claim;
  /// volume.kubernetes.io/selected-node when present: provisioning for that node is under way,
  /// so no other node fits.
  std::optional<std::string> selected_node;
  /// The claim's class; null when it does not exist.
  std::shared_ptr<const storage::StorageClass> storage_class;
  /// Whether the class provisions (a provisioner other than kubernetes.io/no-provisioner), and
  /// where (allowedTopologies).
  bool provisionable = false;
  std::optional<NodeLabelMatcher> topology;
  /// A PV bound or pre-bound to this claim: it alone is tried.
  std::optional<VolumeRef> bound_volume;
  /// Free PVs that pass every check but node affinity, smallest first.
  std::vector<VolumeRef> candidates;
};

struct StaticBinding {
  VolumeRef volume;
  std::shared_ptr<const storage::PersistentVolumeClaim> claim;
  /// Reserve: whether the volume had to change (it was not bound to the claim already).
  bool changed = false;
};

/// What binds the pod's claims on one node (kube-scheduler's PodVolumes).
struct PodVolumes {
  std::shared_ptr<const Node> node;
  std::vector<StaticBinding> static_bindings;
  std::vector<std::shared_ptr<const storage::PersistentVolumeClaim>> dynamic_provisions;

  bool empty() const { return static_bindings.empty() && dynamic_provisions.empty(); }
};

class VolumeBindingState final : public StateData {
 public:
  struct Shared {
    std::vector<BoundClaim> bound;
    std::vector<ClaimToBind> to_bind;
    /// Indices into to_bind of the claims without a selected node, smallest request first:
    /// the order in which they take volumes.
    std::vector<std::size_t> match_order;

    /// Filter's findings on the nodes that passed with something to bind.
    std::mutex mu;
    StringMap<std::shared_ptr<const PodVolumes>> by_node;  // under mu

    /// Reserve: nothing to bind (PreBind has nothing to do), or what it assumed.
    bool all_bound = false;
    std::shared_ptr<const PodVolumes> reserved;
  };

  VolumeBindingState() : shared(std::make_shared<Shared>()) {}
  /// Clones share the findings, as upstream's state does: preemption's what-if Filter runs
  /// find the same volumes.
  std::unique_ptr<StateData> clone() const override {
    return std::make_unique<VolumeBindingState>(*this);
  }

  std::shared_ptr<Shared> shared;
};

}  // namespace koord::roles::scheduler::upstream::volumebinding
