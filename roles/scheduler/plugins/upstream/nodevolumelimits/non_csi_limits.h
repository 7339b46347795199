// kube-scheduler 1.20's in-tree volume limits (EBSLimits, GCEPDLimits, AzureDiskLimits,
// CinderLimits): the unique volumes of one in-tree disk type the node's pods and the new pod
// use, inline or through claims, may not exceed the node's limit for that type.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "framework/framework_handle.h"
#include "framework/plugin.h"
#include "plugins/upstream/nodevolumelimits/volume_limits_common.h"

namespace koord::roles::scheduler::upstream {

inline constexpr std::string_view kEBSLimitsName = "EBSLimits";
inline constexpr std::string_view kGCEPDLimitsName = "GCEPDLimits";
inline constexpr std::string_view kAzureDiskLimitsName = "AzureDiskLimits";
inline constexpr std::string_view kCinderLimitsName = "CinderLimits";

/// The limit when the node's allocatable has none for the type (and KUBE_MAX_PD_VOLS is unset).
inline constexpr std::int64_t kDefaultMaxEBSVolumes = 39;
inline constexpr std::int64_t kDefaultMaxEBSNitroVolumes = 25;
inline constexpr std::int64_t kDefaultMaxGCEPDVolumes = 16;
inline constexpr std::int64_t kDefaultMaxAzureDiskVolumes = 16;
inline constexpr std::int64_t kDefaultMaxCinderVolumes = 256;
/// The environment variable that replaces every default above (a positive integer).
inline constexpr std::string_view kKubeMaxPDVols = "KUBE_MAX_PD_VOLS";

/// Whether an EC2 instance type is a Nitro one with the lower EBS limit (volumeutil's
/// EBSNitroLimitRegex "^[cmr]5.*|t3|z1d", unanchored as Go matches it).
bool isEBSNitroInstanceType(std::string_view instance_type);

/// KUBE_MAX_PD_VOLS's value; nullopt when unset, and (logged once) when not a positive integer.
std::optional<std::int64_t> maxPDVolumesFromEnv();

/// One in-tree type's limit: Filter as 1.20; PreFilter (a Skip from later upstream) resolves
/// the pod's volumes of the type once and answers Skip when it has none. The node's limit is
/// its allocatable under the type's key, else the default (for EBS by the node's
/// node.kubernetes.io/instance-type, else beta.kubernetes.io/instance-type, label). Nodes whose
/// CSINode lists the plugin as migrated are left to NodeVolumeLimits.
class NonCSILimits final : public PreFilterPlugin, public FilterPlugin {
 public:
  /// `max_from_env`: KUBE_MAX_PD_VOLS as read once at startup.
  NonCSILimits(std::string_view name, const volumelimits::InTreePlugin& plugin,
               FrameworkHandle& handle, std::optional<std::int64_t> max_from_env);
  std::string_view name() const override { return name_; }
  Status preFilter(CycleState& state, const PodInfo& pod) override;
  Status filter(const CycleState& state, const PodInfo& pod, const NodeInfo& node) const override;
  bool passesEveryNode(const PodInfo& pod) const override;

  /// The limit for a node without an allocatable count for the type.
  std::int64_t defaultLimit(const Node& node) const;

 private:
  /// The pod's volumes of the type (unique keys), or the error 1.20 reports for the pod.
  Status podVolumes(const PodInfo& pod, volumelimits::KeepAlive& keep,
                    std::vector<volumelimits::VolumeKey>& out) const;
  Status fits(const std::vector<volumelimits::VolumeKey>& pod_volumes, const NodeInfo& node,
              volumelimits::CountScratch& scratch) const;

  std::string_view name_;
  const volumelimits::InTreePlugin& plugin_;
  volumelimits::StorageView storage_;
  std::optional<std::int64_t> max_from_env_;
};

}  // namespace koord::roles::scheduler::upstream
