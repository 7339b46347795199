// Whether preemption should run for a pod at all, and on which nodes it could help
// (kube-scheduler 1.20's PodEligibleToPreemptOthers and nodesWherePreemptionMightHelp).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "framework/node_info.h"
#include "framework/plugin.h"
#include "framework/pod_info.h"
#include "framework/snapshot.h"

namespace koord::roles::scheduler::upstream {

inline constexpr std::string_view kNotEligiblePreemptNever =
    "not eligible due to preemptionPolicy=Never.";
inline constexpr std::string_view kNotEligibleTerminating =
    "not eligible due to a terminating pod on the nominated node.";
inline constexpr std::string_view kPreemptionNotHelpful =
    "Preemption is not helpful for scheduling";

/// Why `pod` must not preempt now, or nullopt when it may. A pod with preemptionPolicy Never
/// never does; a pod nominated to a node where a lower-priority pod is still terminating waits
/// for it (that is likely its own earlier victim), unless the filters now reject that node as
/// unresolvable.
std::optional<std::string_view> notEligibleToPreempt(const PodInfo& pod, const Snapshot& snapshot,
                                                     const NodeStatusMap& filtered);

/// The snapshot's nodes whose filter status is not UnschedulableAndUnresolvable, in order.
std::vector<const NodeInfo*> nodesWherePreemptionMightHelp(const Snapshot& snapshot,
                                                           const NodeStatusMap& filtered);

}  // namespace koord::roles::scheduler::upstream
