// PreFilter's CPU bind state and the per-node policy reads and checks.
#include "plugins/nodenumaresource/pod_policy.h"

#include <algorithm>
#include <limits>
#include <string>

#include <fmt/format.h>

namespace koord::roles::scheduler::nodenumaresource {

namespace {

bool binds(CpuBindPolicy p) {
  return p == CpuBindPolicy::kFullPCPUs || p == CpuBindPolicy::kSpreadByPCPUs;
}

Error unresolvable(std::string_view reason) {
  return invalidArgument(std::string(reason));
}

}  // namespace

bool allowsCpuBinding(apis::QoSClass qos_label, apis::PriorityClass priority_with_default) {
  return (qos_label == apis::QoSClass::kLSE || qos_label == apis::QoSClass::kLSR) &&
         priority_with_default == apis::PriorityClass::kProd;
}

Expected<PodCpuBind> podCpuBind(const ResourceSpec& spec, bool allows_cpu_binding,
                                std::int64_t requested_milli_cpu, CpuBindPolicy default_policy) {
  PodCpuBind out;
  out.num_cpus_needed = static_cast<int>(
      std::clamp<std::int64_t>(requested_milli_cpu / 1000, 0, std::numeric_limits<int>::max()));
  if (!allows_cpu_binding)
    return out;
  CpuBindPolicy policy = spec.preferred_cpu_bind_policy;
  if (policy == CpuBindPolicy::kNone || policy == CpuBindPolicy::kDefault)
    policy = default_policy;
  CpuBindPolicy required = spec.required_cpu_bind_policy;
  if (required == CpuBindPolicy::kDefault)
    required = default_policy;
  if (required != CpuBindPolicy::kNone)
    policy = required;
  if (!binds(policy))
    return out;
  if (requested_milli_cpu % 1000 != 0)
    return unresolvable(kErrInvalidRequestedCPUs);
  if (requested_milli_cpu > 0) {
    out.request_cpu_bind = true;
    out.required = required;
    out.preferred = policy;
    out.exclusive = spec.preferred_cpu_exclusive_policy;
  }
  return out;
}

NodeCpuBindPolicy nodeCpuBindPolicy(const kube::Labels& node_labels, bool kubelet_full_pcpus_only) {
  std::string_view label;
  if (auto it = node_labels.find(kLabelNodeCPUBindPolicy); it != node_labels.end())
    label = it->second;
  if (label == "FullPCPUsOnly" || kubelet_full_pcpus_only)
    return NodeCpuBindPolicy::kFullPCPUsOnly;
  if (label == "SpreadByPCPUs")
    return NodeCpuBindPolicy::kSpreadByPCPUs;
  return NodeCpuBindPolicy::kNone;
}

Expected<bool> requestsCpuBindOnNode(const PodCpuBind& pod, std::int64_t requested_milli_cpu,
                                     NodeCpuBindPolicy node_policy) {
  if (pod.request_cpu_bind)
    return true;
  if (requested_milli_cpu == 0 || node_policy == NodeCpuBindPolicy::kNone)
    return false;
  if (requested_milli_cpu % 1000 != 0)
    return unresolvable(kErrInvalidRequestedCPUs);
  return true;
}

CpuBindChoice cpuBindPolicyOnNode(const PodCpuBind& pod, NodeCpuBindPolicy node_policy) {
  if (pod.required != CpuBindPolicy::kNone)
    return {pod.required, true};
  switch (node_policy) {
    case NodeCpuBindPolicy::kSpreadByPCPUs:
      return {CpuBindPolicy::kSpreadByPCPUs, true};
    case NodeCpuBindPolicy::kFullPCPUsOnly:
      return {CpuBindPolicy::kFullPCPUs, true};
    case NodeCpuBindPolicy::kNone:
      break;
  }
  return {pod.preferred, false};
}

Expected<void> checkCpuBindOnNode(const PodCpuBind& pod, NodeCpuBindPolicy node_policy,
                                  int cpus_per_core) {
  CpuBindPolicy required = pod.required;
  if (node_policy == NodeCpuBindPolicy::kFullPCPUsOnly)
    required = CpuBindPolicy::kFullPCPUs;
  else if (node_policy == NodeCpuBindPolicy::kSpreadByPCPUs)
    required = CpuBindPolicy::kSpreadByPCPUs;
  if (pod.required != CpuBindPolicy::kNone && pod.required != required)
    return unresolvable(kErrCPUBindPolicyConflict);
  if (required == CpuBindPolicy::kFullPCPUs &&
      (cpus_per_core <= 0 || pod.num_cpus_needed % cpus_per_core != 0))
    return unresolvable(kErrSMTAlignmentError);
  return {};
}

Expected<NumaTopologyPolicy> nodeNumaTopologyPolicy(const kube::Labels& node_labels,
                                                    NumaTopologyPolicy kubelet_policy) {
  auto it = node_labels.find(kLabelNUMATopologyPolicy);
  if (it == node_labels.end() || it->second.empty())
    return kubelet_policy;
  auto policy = parseNumaTopologyPolicy(it->second);
  if (!policy)
    return invalidArgument(fmt::format("{}: unknown NUMA topology policy \"{}\"",
                                       kLabelNUMATopologyPolicy, it->second));
  return *policy;
}

NumaExclusive podNumaExclusive(const NumaTopologySpec& spec) {
  if (spec.single_numa_node_exclusive == NumaExclusive::kNone &&
      spec.numa_topology_policy != NumaTopologyPolicy::kNone)
    return NumaExclusive::kRequired;
  return spec.single_numa_node_exclusive;
}

NumaAllocateStrategy defaultNumaAllocateStrategy(bool numa_scoring_most_allocated) {
  return numa_scoring_most_allocated ? NumaAllocateStrategy::kMostAllocated
                                     : NumaAllocateStrategy::kLeastAllocated;
}

NumaAllocateStrategy nodeNumaAllocateStrategy(const kube::Labels& node_labels,
                                              NumaAllocateStrategy fallback) {
  auto it = node_labels.find(kLabelNodeNUMAAllocateStrategy);
  if (it == node_labels.end() || it->second.empty())
    return fallback;
  return parseNumaAllocateStrategy(it->second).value_or(NumaAllocateStrategy::kLeastAllocated);
}

}  // namespace koord::roles::scheduler::nodenumaresource
