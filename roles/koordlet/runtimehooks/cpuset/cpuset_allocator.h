// CPUSetAllocator's policy: a pod the scheduler bound to CPUs (LSE/LSR, cpuset in its
// scheduling.koordinator.sh/resource-status annotation) gets that cpuset and no CFS quota.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "koord/kube/error.h"
#include "koord/kube/labels.h"

namespace koord::roles::koordlet {

inline constexpr std::string_view kAnnotationResourceStatus =
    "scheduling.koordinator.sh/resource-status";

/// What a bound pod's containers get: cpuset.cpus, and cpu quota -1 (unlimited), since a CFS
/// quota on top of exclusive CPUs only throttles (Koordinator issue 489).
struct CPUSetBinding {
  std::string cpus;  // the kernel's spelling, e.g. "0-3,8"
};

/// The binding from the pod's annotations: nullopt without the annotation or without a cpuset
/// in it. The annotation as Go's json.Unmarshal reads Koordinator's ResourceStatus (null is
/// empty, other keys ignored), at most kMaxAnnotationValueBytes, and the cpuset must be a valid
/// CPU list; errors name the field. A cpuset is an error unless the pod's koordinator.sh/qosClass
/// label is LSE or LSR: only those get exclusive CPUs from the scheduler, and anyone who may
/// create a pod may write the annotation, so honouring it elsewhere would pin a pod onto
/// another pod's exclusive CPUs.
kube::Expected<std::optional<CPUSetBinding>> podCPUSetBinding(const kube::Labels& labels,
                                                              const kube::Annotations& annotations);

}  // namespace koord::roles::koordlet
