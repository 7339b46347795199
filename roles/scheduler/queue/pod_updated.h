// Whether a pod update may have made an unschedulable pod schedulable (kube-scheduler's
// isPodUpdated): anything but the status and the resourceVersion counts.
#pragma once

#include "framework/pod_info.h"

namespace koord::roles::scheduler {

/// True when `old_pod` and `new_pod` differ in metadata or spec. Ignored, as upstream strips
/// them: resourceVersion and the status (phase, nominatedNodeName). A field added to PodInfo
/// must be added to the comparison too.
bool isPodUpdated(const PodInfo& old_pod, const PodInfo& new_pod);

}  // namespace koord::roles::scheduler
