// VolumeZone (kube-scheduler 1.20): a pod's claims bound to PersistentVolumes carrying zone or
// region labels fit only nodes carrying one of the same values under the same label.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "framework/framework_handle.h"
#include "framework/object_source.h"
#include "framework/plugin.h"
#include "plugins/upstream/storage/storage_objects.h"

namespace koord::roles::scheduler::upstream {

inline constexpr std::string_view kVolumeZoneName = "VolumeZone";
inline constexpr std::string_view kErrReasonVolumeZoneConflict =
    "node(s) had no available volume zone";

/// The labels VolumeZone compares between a PersistentVolume and a node (1.20 compares each
/// under its own key: a volume's beta label needs the node's beta label).
inline constexpr std::string_view kVolumeZoneLabels[] = {
    "failure-domain.beta.kubernetes.io/zone",
    "failure-domain.beta.kubernetes.io/region",
    "topology.kubernetes.io/zone",
    "topology.kubernetes.io/region",
};

/// One zone label of a volume the pod uses: the node's value under `key` must be among
/// `values` (the label's "__"-separated list).
struct ZoneConstraint {
  std::string key;
  std::vector<std::string> values;
};

/// What a pod's claims require of a node's zone labels, in the order 1.20 meets them: the
/// constraints of the volumes resolved, then the status of the first claim that did not
/// resolve (success when all did).
struct ZoneRequirement {
  std::vector<ZoneConstraint> constraints;
  Status error;
};

/// The "__"-separated zone set of a volume's label value; nullopt when an element is empty
/// (1.20 then ignores the label).
std::optional<std::vector<std::string>> labelZonesToSet(std::string_view value);

/// Filter as 1.20. PreFilter (later upstream's) resolves the claims once per cycle and answers
/// Skip when they constrain no zone; a claim that does not resolve is reported by Filter, on
/// the nodes with zone labels only, as 1.20 does.
class VolumeZone final : public PreFilterPlugin, public FilterPlugin {
 public:
  explicit VolumeZone(FrameworkHandle& handle);
  std::string_view name() const override { return kVolumeZoneName; }
  Status preFilter(CycleState& state, const PodInfo& pod) override;
  Status filter(const CycleState& state, const PodInfo& pod, const NodeInfo& node) const override;
  bool passesEveryNode(const PodInfo& pod) const override;

  /// The pod's requirement as 1.20's Filter works it out.
  ZoneRequirement requirement(const PodInfo& pod) const;

 private:
  const ObjectSource<storage::PersistentVolumeClaim>* claims_;
  const ObjectSource<storage::PersistentVolume>* volumes_;
  const ObjectSource<storage::StorageClass>* classes_;
};

}  // namespace koord::roles::scheduler::upstream
