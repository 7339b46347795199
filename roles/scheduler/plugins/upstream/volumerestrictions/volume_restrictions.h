// VolumeRestrictions (kube-scheduler 1.20): a pod may not mount, on a node, a disk another pod
// there already mounts in a way the disk does not allow (GCE PD, AWS EBS, iSCSI, Ceph RBD).
#pragma once

#include <string_view>

#include "framework/plugin.h"

namespace koord::roles::scheduler::upstream {

inline constexpr std::string_view kVolumeRestrictionsName = "VolumeRestrictions";
inline constexpr std::string_view kErrReasonDiskConflict = "node(s) had no available disk";

/// Filter as 1.20; PreFilter (later upstream's) answers Skip for a pod without a GCE PD, EBS,
/// iSCSI or RBD volume, which conflicts with nothing.
class VolumeRestrictions final : public PreFilterPlugin, public FilterPlugin {
 public:
  std::string_view name() const override { return kVolumeRestrictionsName; }
  Status preFilter(CycleState& state, const PodInfo& pod) override;
  Status filter(const CycleState& state, const PodInfo& pod, const NodeInfo& node) const override;
  bool passesEveryNode(const PodInfo& pod) const override;
};

/// Whether mounting `volume` conflicts with `existing`, a volume of a pod already on the node:
/// the same GCE PD unless both are read-only, the same EBS volume, the same iSCSI IQN unless
/// both are read-only, the same RBD image in the same pool with a monitor in common unless
/// both are read-only.
bool volumesConflict(const PodVolume& volume, const PodVolume& existing);

}  // namespace koord::roles::scheduler::upstream
