// ResctrlReconcile (gate RdtResctrl): Koordinator's LSR, LS and BE resctrl groups with each
// class's L3 CAT mask and MBA value in their schemata, and the threads of the pods of classes
// whose resctrlQOS is enabled moved into their group's tasks.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "qosmanager/framework/strategy.h"
#include "qosmanager/resctrl/resctrl_policy.h"
#include "statesinformer/pod_meta.h"

namespace koord::cgroup {
class ResourceExecutor;
}

namespace koord::roles::koordlet::qosmanager {

struct ResctrlReconcileStats {
  /// resctrlMissingInterface's answer: when set, nothing else was done.
  std::string missing;
  std::size_t groups_created = 0;
  std::size_t schemata_written = 0;
  std::size_t schemata_unchanged = 0;
  std::size_t tasks_added = 0;
  std::size_t task_write_failures = 0;
  /// One message per failure, naming the group or file.
  std::vector<std::string> errors;
  /// What was left alone on purpose (a class's mbaPercent of 0).
  std::vector<std::string> skipped;
};

/// One round: create the groups that are missing, write each group's schemata where it differs
/// (L3 on every cache id of the root schemata, MB on every MB id), then append to each enabled
/// class's group the thread ids of its Running and Pending pods' cgroups (the pod's child
/// cgroups, the sandbox's included) that the group does not hold yet. `pods` null: no task
/// placement. The cgroups are only read.
ResctrlReconcileStats reconcileResctrl(const std::filesystem::path& root,
                                       const ResctrlQOSStrategy& strategy, CpuVendor vendor,
                                       const std::vector<PodMeta>* pods,
                                       const cgroup::ResourceExecutor& cgroups);

/// The CPU vendor from the first vendor_id of <proc_root>/cpuinfo; Intel when it cannot be read.
CpuVendor readCpuVendor(const std::filesystem::path& proc_root);

/// The strategy, every -reconcile-interval-seconds on <-sys-fs-root-dir>/resctrl.
StrategySpec resctrlStrategy();

}  // namespace koord::roles::koordlet::qosmanager
