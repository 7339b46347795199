// The pod annotations NodeNUMAResource reads and writes: scheduling.koordinator.sh/resource-spec
// (the CPU bind and exclusive policies a pod asks for), numa-topology-spec (its NUMA policy)
// and resource-status (the CPUs and NUMA resources the scheduler gave it).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "koord/core/expected.h"
#include "koord/kube/labels.h"
#include "koord/kube/quantity.h"
#include "plugins/nodenumaresource/cpu_set.h"
#include "plugins/nodenumaresource/node_allocation.h"
#include "plugins/nodenumaresource/numa_policy.h"

namespace koord::roles::scheduler::nodenumaresource {

/// {"requiredCPUBindPolicy", "preferredCPUBindPolicy", "preferredCPUExclusivePolicy"}.
struct ResourceSpec {
  CpuBindPolicy required_cpu_bind_policy = CpuBindPolicy::kNone;
  CpuBindPolicy preferred_cpu_bind_policy = CpuBindPolicy::kNone;
  CpuExclusivePolicy preferred_cpu_exclusive_policy = CpuExclusivePolicy::kNone;

  friend bool operator==(const ResourceSpec&, const ResourceSpec&) = default;
};

/// {"numaTopologyPolicy", "singleNUMANodeExclusive"}.
struct NumaTopologySpec {
  NumaTopologyPolicy numa_topology_policy = NumaTopologyPolicy::kNone;
  NumaExclusive single_numa_node_exclusive = NumaExclusive::kNone;

  friend bool operator==(const NumaTopologySpec&, const NumaTopologySpec&) = default;
};

/// One numaNodeResources entry: {"node", "resources"}.
struct NumaNodeResourceStatus {
  int node = 0;
  kube::ResourceList resources;

  friend bool operator==(const NumaNodeResourceStatus&, const NumaNodeResourceStatus&) = default;
};
/// {"cpuset", "numaNodeResources"}.
struct ResourceStatus {
  CpuSet cpuset;
  std::vector<NumaNodeResourceStatus> numa_node_resources;

  friend bool operator==(const ResourceStatus&, const ResourceStatus&) = default;
};

// The annotation values are read as Go's json.Unmarshal reads Koordinator's structs (JSON null,
// whole or per field, is unset; unknown fields are ignored; member names match exactly), but a
// value that Koordinator would carry without effect is refused with an error naming the field:
// a policy it does not spell, a NUMA node outside [0, kMaxNumaNodeId] or given twice, a CPU list
// the kernel would not take. Values longer than apis::kMaxAnnotationValueBytes, and "" (not
// JSON, as in Koordinator), are refused too; errors name the annotation.

Expected<ResourceSpec> parseResourceSpec(std::string_view value);
/// The pod's resource-spec; the unset spec without the annotation.
Expected<ResourceSpec> podResourceSpec(const kube::Annotations& annotations);
/// As Koordinator writes it: unset members left out ({} when all are).
std::string formatResourceSpec(const ResourceSpec& spec);

Expected<NumaTopologySpec> parseNumaTopologySpec(std::string_view value);
Expected<NumaTopologySpec> podNumaTopologySpec(const kube::Annotations& annotations);

/// At most kMaxNumaNodeId + 1 numaNodeResources entries.
Expected<ResourceStatus> parseResourceStatus(std::string_view value);
/// nullopt without the annotation.
Expected<std::optional<ResourceStatus>> podResourceStatus(const kube::Annotations& annotations);
/// As Koordinator writes it: {"cpuset":"0-3","numaNodeResources":[{"node":0,"resources":{...}}]},
/// empty members left out, resources in name order with Quantity's canonical spelling.
std::string formatResourceStatus(const ResourceStatus& status);

/// What the pod informer records for a bound pod (Koordinator's pod event handler): its CPUs
/// and NUMA resources from the status, its exclusive policy from the spec; nullopt when the
/// status holds neither CPUs nor NUMA resources.
std::optional<PodAllocation> podAllocationFromStatus(std::string_view uid,
                                                     std::string_view namespace_,
                                                     std::string_view name,
                                                     const ResourceStatus& status,
                                                     const ResourceSpec& spec);
/// The status the scheduler writes for an allocation.
ResourceStatus resourceStatusOf(const PodAllocation& allocation);

}  // namespace koord::roles::scheduler::nodenumaresource
