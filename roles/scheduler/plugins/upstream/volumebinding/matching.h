// What VolumeBinding asks of one PV, claim or class against a node: node affinity compiled once
// (1.20's CheckNodeAffinity reads the node's labels only), a class's allowed topologies, and the
// claim-to-volume predicates of the PV controller's findMatchingVolume.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "koord/kube/labels.h"
#include "koord/kube/scheduling_match.h"
#include "plugins/upstream/storage/storage_objects.h"

namespace koord::roles::scheduler::upstream::volumebinding {

/// NodeSelector terms with their label selectors built once: a PV's affinity is checked on every
/// node of a cycle, and building a selector per check would allocate per node.
class NodeLabelMatcher {
 public:
  /// A PV's spec.nodeAffinity.required: any term; an empty term, an invalid one, or none at all
  /// match nothing. matchFields see an empty field set, as 1.20 passes none.
  static NodeLabelMatcher volumeAffinity(const kube::NodeSelector& selector);
  /// A StorageClass's allowedTopologies (MatchTopologySelectorTerms): no terms match every node;
  /// otherwise any term with expressions that all hold.
  static NodeLabelMatcher allowedTopologies(const std::vector<kube::NodeSelectorTerm>& terms);

  bool matches(const kube::Labels& node_labels) const;

 private:
  struct Term {
    bool usable = false;  // non-empty and valid
    std::optional<kube::Selector> labels;
    std::vector<kube::NodeSelectorRequirement> fields;
  };
  static Term compile(const kube::NodeSelectorTerm& term);

  std::vector<Term> terms_;
  bool match_all_without_terms_ = false;
};

/// A PV as VolumeBinding keeps it: the object and its node affinity compiled once.
struct VolumeRef {
  std::shared_ptr<const storage::PersistentVolume> pv;
  /// Null: the PV has no required node affinity and fits every node.
  std::shared_ptr<const NodeLabelMatcher> affinity;

  bool fits(const kube::Labels& node_labels) const {
    return affinity == nullptr || affinity->matches(node_labels);
  }
};

/// `pv` with its affinity compiled.
VolumeRef makeVolumeRef(std::shared_ptr<const storage::PersistentVolume> pv);

/// IsVolumeBoundToClaim: claimRef names the claim, and its UID (when set) is the claim's.
bool volumeBoundToClaim(const storage::PersistentVolume& pv,
                        const storage::PersistentVolumeClaim& claim);

/// A claim is fully bound once it names its volume and the PV controller marked it
/// pv.kubernetes.io/bind-completed.
bool claimFullyBound(const storage::PersistentVolumeClaim& claim);

/// The PV controller's static checks of one volume for one claim, before node affinity:
/// capacity, volume mode and deletion first; then, for a volume not bound to the claim,
/// phase Available, the claim's selector, the class and the access modes.
enum class VolumeFit {
  kNo,
  /// The volume is bound (or pre-bound) to this claim: it is the claim's, whatever its size
  /// among the others.
  kBoundToClaim,
  /// A free volume that may be chosen.
  kAvailable,
};
VolumeFit volumeFitsClaim(const storage::PersistentVolume& pv,
                          const storage::PersistentVolumeClaim& claim);

/// "namespace/name".
std::string claimKey(const storage::PersistentVolumeClaim& claim);

/// A resourceVersion as the assume cache orders them; nullopt when it is not an integer.
std::optional<std::int64_t> parseResourceVersion(std::string_view rv);

}  // namespace koord::roles::scheduler::upstream::volumebinding
