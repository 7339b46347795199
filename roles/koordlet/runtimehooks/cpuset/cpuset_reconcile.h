// CPUSetAllocator in reconcile mode (no runtime-proxy, or pods created before it): the rule's
// cpusets written to running pods' containers and sandboxes and to LS host applications.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "runtimehooks/cpuset/cpuset_rule.h"
#include "statesinformer/host_application.h"
#include "statesinformer/pod_meta.h"

namespace koord::cgroup {
class ResourceExecutor;
}

namespace koord::roles::koordlet {

struct CPUSetReconcileStats {
  std::size_t written = 0;
  std::size_t unchanged = 0;
  /// Refused writes are only counted: the executor logged them.
  std::size_t refused = 0;
  /// (what, why): a pod's key or "host application <name>", and the first error for it.
  std::vector<std::pair<std::string, std::string>> errors;
};

/// The pod's sandbox (pause) container directory: the one child of its cgroup directory that is
/// named as a container of the pod's runtime and is none of its containers. nullopt until the
/// pod has a container with an ID, or when there is not exactly one such child (a container
/// being created or removed).
std::optional<std::string> sandboxCgroupDir(const cgroup::ResourceExecutor& cgroups,
                                            const std::string& pod_dir, const PodMeta& pod);

/// For each running pod, planContainerCPUSet's cpuset written to cpuset.cpus of its containers
/// (those with an ID) and sandbox, and for a pod bound to CPUs the CFS quota -1 on those and on
/// the pod's cgroup; then each host application's cpuset (hostAppCpuset). Nothing but bound pods
/// without a rule. Values already there are not written again.
CPUSetReconcileStats reconcileCPUSets(cgroup::ResourceExecutor& cgroups, const CPUSetRule* rule,
                                      std::span<const PodMeta> pods,
                                      std::span<const HostApplication> host_apps,
                                      bool be_cpu_manager);

}  // namespace koord::roles::koordlet
