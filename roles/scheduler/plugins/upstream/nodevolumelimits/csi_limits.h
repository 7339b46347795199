// NodeVolumeLimits (kube-scheduler 1.20's CSILimits): per CSI driver, the unique volumes the
// node's pods and the new pod attach through claims may not exceed the node's limit (CSINode
// drivers[].allocatable.count, else node allocatable attachable-volumes-csi-<driver>).
#pragma once

#include <string_view>
#include <vector>

#include "framework/framework_handle.h"
#include "framework/plugin.h"
#include "plugins/upstream/nodevolumelimits/volume_limits_common.h"

namespace koord::roles::scheduler::upstream {

inline constexpr std::string_view kNodeVolumeLimitsName = "NodeVolumeLimits";

/// Filter as 1.20, counting in-tree volumes (AWS EBS, GCE PD, Azure Disk, Cinder) under their
/// CSI driver on nodes whose CSINode lists the plugin as migrated. PreFilter (a Skip from later
/// upstream) resolves the pod's claims once and answers Skip when none counts for a driver.
class NodeVolumeLimits final : public PreFilterPlugin, public FilterPlugin {
 public:
  explicit NodeVolumeLimits(FrameworkHandle& handle);
  std::string_view name() const override { return kNodeVolumeLimitsName; }
  Status preFilter(CycleState& state, const PodInfo& pod) override;
  Status filter(const CycleState& state, const PodInfo& pod, const NodeInfo& node) const override;
  bool passesEveryNode(const PodInfo& pod) const override;

 private:
  /// The pod's claims as CSI volumes (unique keys), or the error 1.20 reports for the pod.
  Status podVolumes(const PodInfo& pod, volumelimits::KeepAlive& keep,
                    std::vector<volumelimits::CSIVolume>& out) const;
  Status fits(const std::vector<volumelimits::CSIVolume>& pod_volumes, const NodeInfo& node,
              volumelimits::CountScratch& scratch) const;

  volumelimits::StorageView storage_;
};

}  // namespace koord::roles::scheduler::upstream
