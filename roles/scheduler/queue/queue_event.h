// Why a pod entered a sub-queue: kube-scheduler 1.20's event names, the `event` label of
// scheduler_queue_incoming_pods_total and the argument of moveAllToActiveOrBackoffQueue.
#pragma once

#include <string_view>

namespace koord::roles::scheduler {

enum class QueueEvent {
  kUnknown,
  kPodAdd,
  /// A gated pod's update let it into the active queue (1.26+'s UnscheduledPodUpdate).
  kPodUpdate,
  kScheduleAttemptFailure,
  kBackoffComplete,
  kUnschedulableTimeout,
  kAssignedPodAdd,
  kAssignedPodUpdate,
  kAssignedPodDelete,
  kNodeAdd,
  kNodeSpecUnschedulableChange,
  kNodeAllocatableChange,
  kNodeLabelChange,
  kNodeTaintChange,
  kNodeConditionChange,
  kPvAdd,
  kPvUpdate,
  kPvcAdd,
  kPvcUpdate,
  kStorageClassAdd,
  kServiceAdd,
  kServiceUpdate,
  kServiceDelete,
  kCSINodeAdd,
  kCSINodeUpdate,
  /// A plugin asked for the pod (kube-scheduler's Activate: a gang's siblings).
  kForceActivate,
};

/// The upstream spelling ("NodeAdd", "AssignedPodDelete", ...).
std::string_view toString(QueueEvent event);

/// The sub-queues, as the `queue` label of the queue metrics spells them.
inline constexpr std::string_view kActiveQueue = "active";
inline constexpr std::string_view kBackoffQueue = "backoff";
inline constexpr std::string_view kUnschedulableQueue = "unschedulable";
/// Pods a PreEnqueue plugin keeps out (scheduling gates), as kube-scheduler 1.26+ labels them.
inline constexpr std::string_view kGatedQueue = "gated";

}  // namespace koord::roles::scheduler
