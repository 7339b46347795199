// CPUSetAllocator's rule (Koordinator's cpusetRule): the node's shared CPU pools, BE pools,
// system QoS cpuset and kubelet CPU manager policy, and the cpuset each kind of pod gets from them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "koord/apis/extension.h"
#include "koord/kube/error.h"
#include "koord/kube/labels.h"

namespace koord::roles::koordlet {

/// One NUMA node's pool, its CPUs parsed.
struct CPUSetPool {
  std::int32_t node = 0;
  std::vector<int> cpus;  // sorted, no duplicates
  friend bool operator==(const CPUSetPool&, const CPUSetPool&) = default;
};

struct CPUSetRule {
  /// kubelet.koordinator.sh/cpu-manager-policy's policy: "static", "none", or "" (not known,
  /// read as none, as Koordinator does).
  std::string kubelet_policy;
  /// node.koordinator.sh/cpu-shared-pools and be-cpu-shared-pools, in the annotation's order.
  std::vector<CPUSetPool> pools;
  std::vector<CPUSetPool> be_pools;
  /// node.koordinator.sh/system-qos-resource's cpuset in the kernel's spelling; "" when unset.
  std::string system_qos_cpuset;
  friend bool operator==(const CPUSetRule&, const CPUSetRule&) = default;
};

/// The rule from a NodeResourceTopology's annotations (absent ones are empty). Errors, which
/// name the annotation: any the parsers of koord/apis/node_resource_topology.h refuse, a pool
/// or system QoS cpuset that is not a CPU list, a system-qos-resource that is not an object of
/// {"cpuset": string, "cpusetExclusive": bool} or longer than kMaxAnnotationValueBytes.
kube::Expected<CPUSetRule> parseCPUSetRule(const kube::Labels& nrt_annotations);

/// Every pool's CPUs joined, in the kernel's spelling ("" without any).
std::string allPoolsCpuset(const CPUSetRule& rule);

/// What a container is created with or reconciled to, as Koordinator's getContainerCPUSet answers:
/// nullopt leaves the cpuset alone, a value sets it. "" is Koordinator's answer for a BestEffort
/// container (its runtime-proxy clears the kubelet's cpuset then, so the container runs on its
/// QoS tier's CPUs, which BE suppression sets): koord's runtime-proxy cannot tell an empty
/// answer from none (proto3) and Koordinator's reconciler writes no empty value, so koord
/// writes nothing for it either. In order:
/// - NUMA-aware pods (resource-status numaNodeResources with CPU): the pools of those nodes,
///   the BE pools for a koord BE pod (only with the BECPUManager gate; without it a BE pod goes
///   on below);
/// - koord SYSTEM pods: the system QoS cpuset, when the node has one;
/// - koord LS pods: every pool;
/// - Kubernetes BestEffort pods (koord BE among them): "";
/// - the rest (Guaranteed and Burstable pods without a koord QoS, ...): nothing under the
///   kubelet's static CPU manager, which pins them itself; every pool otherwise.
/// LSE/LSR pods bound to CPUs are podCPUSetBinding's; this rule does not see them. Errors: a
/// resource-status that parsePodResourceStatus refuses.
kube::Expected<std::optional<std::string>> containerCpuset(const CPUSetRule& rule,
                                                           const kube::Labels& labels,
                                                           const kube::Annotations& annotations,
                                                           apis::KubeQoS kube_qos,
                                                           bool be_cpu_manager);

/// A host application's cpuset (NodeSLO hostApplications): every pool for an LS one; any other
/// QoS is an error, as only LS is supported.
kube::Expected<std::string> hostAppCpuset(const CPUSetRule& rule, apis::QoSClass qos);

/// Koordinator's GetKubeQoSByCgroupParent, for the hook that sees only the CRI request: a cgroup
/// parent naming "besteffort" is BestEffort, "burstable" Burstable, anything else Guaranteed.
apis::KubeQoS kubeQoSOfCgroupParent(std::string_view cgroup_parent);

/// What CPUSetAllocator does to one pod's containers (and sandbox), the bound cpuset first and
/// the rule after it.
struct ContainerCPUSetPlan {
  /// The cpuset to write; "" leaves it as it is.
  std::string cpus;
  /// Bound to CPUs: the CFS quota goes to -1 (Koordinator issue 489).
  bool unset_cfs_quota = false;
  friend bool operator==(const ContainerCPUSetPlan&, const ContainerCPUSetPlan&) = default;
};

/// podCPUSetBinding when the pod is bound, else containerCpuset with `rule` (nothing without a
/// rule: the node's NodeResourceTopology is not known yet). An error from either changes nothing.
kube::Expected<ContainerCPUSetPlan> planContainerCPUSet(const CPUSetRule* rule,
                                                        const kube::Labels& labels,
                                                        const kube::Annotations& annotations,
                                                        apis::KubeQoS kube_qos,
                                                        bool be_cpu_manager);

}  // namespace koord::roles::koordlet
