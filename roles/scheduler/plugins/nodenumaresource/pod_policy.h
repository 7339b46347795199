// What a pod asks of a node's CPUs and NUMA nodes once its spec, its QoS, the node's labels and
// the scheduler's defaults are combined: Koordinator's PreFilter state and its per-node checks.
#pragma once

#include <cstdint>
#include <string_view>

#include "koord/apis/extension.h"
#include "koord/core/expected.h"
#include "koord/kube/labels.h"
#include "plugins/nodenumaresource/numa_policy.h"
#include "plugins/nodenumaresource/resource_spec.h"

namespace koord::roles::scheduler::nodenumaresource {

inline constexpr std::string_view kErrInvalidRequestedCPUs = "the requested CPUs must be integer";
inline constexpr std::string_view kErrInvalidCPUTopology = "node(s) invalid CPU Topology";
inline constexpr std::string_view kErrSMTAlignmentError =
    "node(s) requested cpus not multiple cpus per core";
inline constexpr std::string_view kErrCPUBindPolicyConflict =
    "node(s) cpu bind policy conflicts with pod's required cpu bind policy";

/// Koordinator's AllowUseCPUSet: only LSE and LSR pods (the koordinator.sh/qosClass label) of
/// the koord-prod priority class (label or spec.priority band, default from the QoS) are bound
/// to CPUs of their own.
bool allowsCpuBinding(apis::QoSClass qos_label, apis::PriorityClass priority_with_default);

/// The pod's side of CPU binding, as PreFilter settles it.
struct PodCpuBind {
  /// The pod asks for CPUs of its own: it may be bound, its effective policy is FullPCPUs or
  /// SpreadByPCPUs and it requests some cpu.
  bool request_cpu_bind = false;
  /// The required policy (Default read as the scheduler's default); kNone when not required or
  /// not binding.
  CpuBindPolicy required = CpuBindPolicy::kNone;
  /// The policy to bind by: required when set, else preferred, else the scheduler's default.
  CpuBindPolicy preferred = CpuBindPolicy::kNone;
  CpuExclusivePolicy exclusive = CpuExclusivePolicy::kNone;
  /// Whole CPUs requested (requested millicores / 1000).
  int num_cpus_needed = 0;

  friend bool operator==(const PodCpuBind&, const PodCpuBind&) = default;
};

/// Refused (kErrInvalidRequestedCPUs, unresolvable) when a binding pod requests a fraction of a
/// CPU. `default_policy` is the args' defaultCPUBindPolicy (FullPCPUs unless configured).
Expected<PodCpuBind> podCpuBind(const ResourceSpec& spec, bool allows_cpu_binding,
                                std::int64_t requested_milli_cpu, CpuBindPolicy default_policy);

/// Koordinator's GetNodeCPUBindPolicy: the node's cpu-bind-policy label, or FullPCPUsOnly when
/// the kubelet runs the static CPU manager with full-pcpus-only=true; unknown values are kNone.
NodeCpuBindPolicy nodeCpuBindPolicy(const kube::Labels& node_labels, bool kubelet_full_pcpus_only);

/// Koordinator's requestCPUBind on a node: what the pod asked, or, on a node that requires a
/// bind policy, any pod requesting cpu (refused with kErrInvalidRequestedCPUs for a fraction).
Expected<bool> requestsCpuBindOnNode(const PodCpuBind& pod, std::int64_t requested_milli_cpu,
                                     NodeCpuBindPolicy node_policy);

struct CpuBindChoice {
  CpuBindPolicy policy = CpuBindPolicy::kNone;
  bool required = false;

  friend bool operator==(const CpuBindChoice&, const CpuBindChoice&) = default;
};
/// Koordinator's getCPUBindPolicy: the pod's required policy; else the node's requirement;
/// else the pod's preferred policy, not required.
CpuBindChoice cpuBindPolicyOnNode(const PodCpuBind& pod, NodeCpuBindPolicy node_policy);

/// Filter's checks for a pod bound on this node: a required policy of the pod's that the node's
/// contradicts (kErrCPUBindPolicyConflict), and a required FullPCPUs request that is not whole
/// cores (kErrSMTAlignmentError). Both unresolvable.
Expected<void> checkCpuBindOnNode(const PodCpuBind& pod, NodeCpuBindPolicy node_policy,
                                  int cpus_per_core);

/// The node's NUMA topology policy: its numa-topology-policy label when set, else the kubelet's
/// topology manager policy from the NodeResourceTopology. An unknown label value is an error.
Expected<NumaTopologyPolicy> nodeNumaTopologyPolicy(const kube::Labels& node_labels,
                                                    NumaTopologyPolicy kubelet_policy);
/// The pod's singleNUMANodeExclusive, Required when unset for a pod that names a NUMA policy.
NumaExclusive podNumaExclusive(const NumaTopologySpec& spec);

/// The args' default strategy: MostAllocated when numaScoringStrategy is MostAllocated,
/// LeastAllocated otherwise.
NumaAllocateStrategy defaultNumaAllocateStrategy(bool numa_scoring_most_allocated);
/// The node's numa-allocate-strategy label when set, else `fallback`. A value Koordinator does
/// not spell orders candidates as LeastAllocated does, as there.
NumaAllocateStrategy nodeNumaAllocateStrategy(const kube::Labels& node_labels,
                                              NumaAllocateStrategy fallback);

}  // namespace koord::roles::scheduler::nodenumaresource
