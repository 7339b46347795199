// CPUSetAllocator's reading of a pod's scheduling.koordinator.sh/resource-status annotation: the
// CPUs the scheduler bound an LSE/LSR pod to, and the NUMA nodes a NUMA-aware pod was placed on.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "koord/kube/error.h"
#include "koord/kube/labels.h"

namespace koord::roles::koordlet {

inline constexpr std::string_view kAnnotationResourceStatus =
    "scheduling.koordinator.sh/resource-status";

/// numaNodeResources entries read from one annotation: Linux has at most 1024 NUMA nodes.
inline constexpr std::size_t kMaxResourceStatusNumaNodes = 1024;
/// Resources of one numaNodeResources entry: cpu, memory, batch and device resources.
inline constexpr std::size_t kMaxResourceStatusResources = 256;

/// The annotation as Go's json.Unmarshal reads Koordinator's ResourceStatus (absent or null is
/// empty, other keys ignored, a null member keeps its zero value).
struct PodResourceStatus {
  /// As written ("" when unset); podCPUSetBinding checks and respells it.
  std::string cpuset;
  /// The numaNodeResources nodes that hold CPU (cpu not zero, or batch-cpu above zero), in the
  /// annotation's order: a pod with any is NUMA-aware. Entries with memory only do not count.
  std::vector<std::int32_t> cpu_numa_nodes;
};

/// At most kMaxAnnotationValueBytes, kMaxResourceStatusNumaNodes entries and
/// kMaxResourceStatusResources resources each; a node must be an int32 and a quantity a string
/// or an integer that parses. Errors name the member ("numaNodeResources[1].resources.cpu: ...").
kube::Expected<PodResourceStatus> parsePodResourceStatus(const kube::Annotations& annotations);

/// What a bound pod's containers get: cpuset.cpus, and cpu quota -1 (unlimited), since a CFS
/// quota on top of exclusive CPUs only throttles (Koordinator issue 489).
struct CPUSetBinding {
  std::string cpus;  // the kernel's spelling, e.g. "0-3,8"
};

/// The binding from the pod's annotations: nullopt without the annotation or without a cpuset
/// in it. The annotation is read by parsePodResourceStatus and the cpuset must be a valid CPU
/// list; errors name the field. A cpuset is an error unless the pod's koordinator.sh/qosClass
/// label is LSE or LSR: only those get exclusive CPUs from the scheduler, and anyone who may
/// create a pod may write the annotation, so honouring it elsewhere would pin a pod onto
/// another pod's exclusive CPUs.
kube::Expected<std::optional<CPUSetBinding>> podCPUSetBinding(const kube::Labels& labels,
                                                              const kube::Annotations& annotations);
/// The same from an annotation already read.
kube::Expected<std::optional<CPUSetBinding>> podCPUSetBinding(const kube::Labels& labels,
                                                              const PodResourceStatus& status);

}  // namespace koord::roles::koordlet
