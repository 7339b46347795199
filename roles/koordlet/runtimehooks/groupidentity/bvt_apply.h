// GroupIdentity's writes: the kernel switch (kernel.sched_group_identity_enabled, with
// kernel.sched_core off, on Anolis kernels that have them) and cpu.bvt_warp_ns on the QoS tiers,
// the pods and their containers, host applications and pod cgroups no pod owns any more.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "koord/kube/error.h"
#include "runtimehooks/groupidentity/bvt_rule.h"
#include "statesinformer/host_application.h"
#include "statesinformer/pod_meta.h"

namespace koord::cgroup {
class ResourceExecutor;
}

namespace koord::roles::koordlet {

/// The path of cpu.bvt_warp_ns in the kubepods cgroup when the kernel lacks it (any kernel but
/// Anolis's, or no pod has run yet), else "". Without it GroupIdentity writes nothing.
std::string groupIdentityMissingInterface(const cgroup::ResourceExecutor& cgroups);

/// Koordinator's initSysctl and isSysctlEnabled under <proc_root>/sys/kernel: for an enabled
/// rule, sched_core is turned off (the kernel refuses bvt -1 beside core scheduling) and
/// sched_group_identity_enabled on; for a disabled one, nothing is written. Answers whether the
/// cgroups should be written: false only for a disabled rule on a kernel whose switch is off
/// (nothing to undo). A kernel without the switch counts as on.
kube::Expected<bool> prepareGroupIdentitySysctl(const std::filesystem::path& proc_root,
                                                bool rule_enable);

struct BvtApplyStats {
  std::size_t written = 0;
  std::size_t unchanged = 0;
  /// Writes refused by the kernel or the range check, counted only: the executor logged them.
  std::size_t refused = 0;
  /// One message per other failed write or listing, naming the file.
  std::vector<std::string> errors;
};

/// One round of Koordinator's rule update: the tiers' values; each pod's value on its cgroup and
/// its containers' (a new container inherits the pod's, but one created before a rule change
/// keeps the old value); host applications' by their QoS; pod cgroups of no listed pod get
/// their tier's value, so that a rule turned off leaves no BE cgroup at -1. Cgroups that do not
/// exist are skipped.
BvtApplyStats applyBvtRule(cgroup::ResourceExecutor& cgroups, const BvtRule& rule,
                           const std::vector<PodMeta>& pods, const HostApplications* host_apps);

/// A pod's cgroup (`pod_dir`, relative) and its children set to `value`.
void writePodBvt(cgroup::ResourceExecutor& cgroups, const std::string& pod_dir, std::int64_t value,
                 BvtApplyStats& stats);

}  // namespace koord::roles::koordlet
