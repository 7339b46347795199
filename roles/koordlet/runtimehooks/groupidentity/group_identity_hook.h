// GroupIdentity as a runtime hook (Koordinator's bvt plugin): a new pod's cgroup gets its
// cpu.bvt_warp_ns at PreRunPodSandbox, and a pod-level reconciler applies the NodeSLO's rule to
// the QoS tiers, every pod, its containers and the host applications.
#pragma once

#include <filesystem>
#include <memory>
#include <mutex>

#include "runtimehooks/groupidentity/bvt_rule.h"
#include "runtimehooks/hooks/runtime_hook.h"

namespace koord::roles::koordlet {

/// What the reconciler last decided, for the hook server's thread (hooks are plain functions,
/// so the rule lives here, as Koordinator's plugin keeps it in its singleton). Thread-safe.
class GroupIdentityState {
 public:
  struct View {
    /// null until a NodeSLO was read on a kernel with cpu.bvt_warp_ns: the hook does nothing.
    std::shared_ptr<const BvtRule> rule;
    /// false for a disabled rule on a kernel whose switch is off: nothing to write.
    bool write_cgroups = false;
  };
  View view() const;
  void set(std::shared_ptr<const BvtRule> rule, bool write_cgroups);

  /// -proc-root-dir, for kernel.sched_group_identity_enabled; "/proc" until set.
  void setProcRoot(std::filesystem::path proc_root);
  std::filesystem::path procRoot() const;

 private:
  mutable std::mutex mu_;
  View view_;
  std::filesystem::path proc_root_ = "/proc";
};

/// The koordlet's one state.
GroupIdentityState& groupIdentityState();

RuntimeHook groupIdentityHook();

}  // namespace koord::roles::koordlet
