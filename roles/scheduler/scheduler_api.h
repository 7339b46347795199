// What the scheduling loop needs from the cluster beyond plugins' ClusterView: the pod's current
// version (to requeue or drop it after a failure) and where outcomes are reported.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "framework/framework_handle.h"

namespace koord::roles::scheduler {

/// v1.PodReasonUnschedulable and kube-scheduler's SchedulerError: the PodScheduled=False
/// condition's reason.
inline constexpr std::string_view kReasonUnschedulable = "Unschedulable";
inline constexpr std::string_view kReasonSchedulerError = "SchedulerError";

class SchedulerApi : public ClusterView {
 public:
  /// The pod as the informer has it now; null once it is gone.
  virtual std::shared_ptr<const PodInfo> currentPod(const std::string& key) const = 0;
  /// A Normal "Scheduled" Event from the profile's scheduler.
  virtual void reportScheduled(const PodInfo& pod, const std::string& node,
                               const std::string& profile) = 0;
  /// A Warning "FailedScheduling" Event, and the PodScheduled=False condition with `reason` and
  /// `message` (plus status.nominatedNodeName when preemption nominated a node), written only
  /// when they differ from what was last written for the pod.
  virtual void reportFailure(const PodInfo& pod, const std::string& profile,
                             std::string_view reason, const std::string& message,
                             const std::string& nominated_node) = 0;
};

}  // namespace koord::roles::scheduler
