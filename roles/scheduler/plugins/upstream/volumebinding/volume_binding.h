// kube-scheduler 1.20's VolumeBinding: a pod's PersistentVolumeClaims must exist and be bound or
// bindable on the node (their PVs' node affinity, a free PV that fits, or a class that can
// provision there); Reserve assumes the choice, PreBind writes it and waits for the PV
// controller to finish binding.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "framework/framework_handle.h"
#include "framework/plugin.h"
#include "plugins/upstream/storage/storage_objects.h"
#include "plugins/upstream/volumebinding/args.h"
#include "plugins/upstream/volumebinding/binder.h"
#include "plugins/upstream/volumebinding/state.h"
#include "plugins/upstream/volumebinding/volume_cache.h"

namespace koord::roles::scheduler::upstream::volumebinding {

inline constexpr std::string_view kName = "VolumeBinding";

/// Filter's reasons (ConflictReasons) and PreFilter's, as kube-scheduler words them.
inline constexpr std::string_view kReasonBindConflict =
    "node(s) didn't find available persistent volumes to bind";
inline constexpr std::string_view kReasonNodeConflict = "node(s) had volume node affinity conflict";
inline constexpr std::string_view kReasonUnboundImmediate =
    "pod has unbound immediate PersistentVolumeClaims";
/// The provisioner of classes whose volumes are created by hand (local volumes).
inline constexpr std::string_view kNoProvisioner = "kubernetes.io/no-provisioner";

class VolumeBinding final : public PreFilterPlugin,
                            public FilterPlugin,
                            public ReservePlugin,
                            public PreBindPlugin {
 public:
  VolumeBinding(std::shared_ptr<const VolumeBindingArgs> args, FrameworkHandle& handle);

  std::string_view name() const override { return kName; }
  /// Skip for a pod without claims. A claim that is missing, being deleted or (an ephemeral
  /// volume's) not the pod's, or an unbound claim not waiting for its first consumer, makes the
  /// pod UnschedulableAndUnresolvable; otherwise the claims and their candidate PVs go into the
  /// cycle state (Skip as well when nothing is left to check per node).
  Status preFilter(CycleState& state, const PodInfo& pod) override;
  /// UnschedulableAndUnresolvable with kReasonNodeConflict (a bound claim's PV does not allow
  /// the node) and/or kReasonBindConflict (no free PV fits and no provisioning there).
  Status filter(const CycleState& state, const PodInfo& pod, const NodeInfo& node) const override;
  Status reserve(CycleState& state, const PodInfo& pod, const std::string& node) override;
  void unreserve(CycleState& state, const PodInfo& pod, const std::string& node) override;
  void preBind(std::shared_ptr<CycleState> state, std::shared_ptr<const PodInfo> pod,
               const std::string& node, StatusCallback done) override;

  const VolumeCache& cache() const { return *cache_; }
  const VolumeBinder& binder() const { return *binder_; }

 private:
  /// Whether every claim of the pod is fully bound in the cache (arePodVolumesBound).
  bool podVolumesBound(const PodInfo& pod) const;
  void fillCandidates(ClaimToBind& c) const;
  void restore(const PodVolumes& volumes);

  std::shared_ptr<const VolumeBindingArgs> args_;
  FrameworkHandle& handle_;
  const ObjectSource<storage::StorageClass>* classes_;
  std::unique_ptr<VolumeCache> cache_;
  std::shared_ptr<VolumeBinder> binder_;
};

}  // namespace koord::roles::scheduler::upstream::volumebinding
