#include "plugins/upstream/volumerestrictions/volume_restrictions.h"

#include <algorithm>
#include <string>

namespace koord::roles::scheduler::upstream {

namespace {

bool restrictedKind(VolumeSourceKind kind) {
  return kind == VolumeSourceKind::kGCEPersistentDisk ||
         kind == VolumeSourceKind::kAWSElasticBlockStore || kind == VolumeSourceKind::kISCSI ||
         kind == VolumeSourceKind::kRBD;
}

bool hasRestrictedVolume(const PodInfo& pod) {
  return std::any_of(pod.volumes.begin(), pod.volumes.end(),
                     [](const PodVolume& v) { return restrictedKind(v.kind); });
}

// A handful of monitors each: a nested scan beats building a set.
bool shareMonitor(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  for (const auto& m : a) {
    if (std::find(b.begin(), b.end(), m) != b.end())
      return true;
  }
  return false;
}

}  // namespace

bool volumesConflict(const PodVolume& volume, const PodVolume& existing) {
  if (volume.kind != existing.kind)
    return false;
  const bool both_read_only = volume.read_only && existing.read_only;
  switch (volume.kind) {
    case VolumeSourceKind::kGCEPersistentDisk:
    case VolumeSourceKind::kISCSI:
      return volume.id == existing.id && !both_read_only;
    case VolumeSourceKind::kAWSElasticBlockStore:
      return volume.id == existing.id;
    case VolumeSourceKind::kRBD:
      return volume.id == existing.id && volume.pool == existing.pool && !both_read_only &&
             shareMonitor(volume.monitors, existing.monitors);
    default:
      return false;
  }
}

bool VolumeRestrictions::passesEveryNode(const PodInfo& pod) const {
  return !hasRestrictedVolume(pod);
}

Status VolumeRestrictions::preFilter(CycleState&, const PodInfo& pod) {
  return hasRestrictedVolume(pod) ? Status::success() : Status::skip();
}

Status VolumeRestrictions::filter(const CycleState&, const PodInfo& pod,
                                  const NodeInfo& node) const {
  // A caller that asked neither PreFilter nor passesEveryNode reaches here for every pod.
  if (!hasRestrictedVolume(pod))
    return Status::success();
  for (const auto& other : node.pods) {
    for (const PodVolume& existing : other->volumes) {
      if (!restrictedKind(existing.kind))
        continue;
      for (const PodVolume& volume : pod.volumes) {
        if (volumesConflict(volume, existing))
          return Status::unschedulable(std::string(kErrReasonDiskConflict));
      }
    }
  }
  return Status::success();
}

}  // namespace koord::roles::scheduler::upstream
