#include "queue/queue_event.h"

namespace koord::roles::scheduler {

std::string_view toString(QueueEvent event) {
  switch (event) {
    case QueueEvent::kUnknown:
      return "Unknown";
    case QueueEvent::kPodAdd:
      return "PodAdd";
    case QueueEvent::kPodUpdate:
      return "UnscheduledPodUpdate";
    case QueueEvent::kScheduleAttemptFailure:
      return "ScheduleAttemptFailure";
    case QueueEvent::kBackoffComplete:
      return "BackoffComplete";
    case QueueEvent::kUnschedulableTimeout:
      return "UnschedulableTimeout";
    case QueueEvent::kForceActivate:
      return "ForceActivate";
    case QueueEvent::kAssignedPodAdd:
      return "AssignedPodAdd";
    case QueueEvent::kAssignedPodUpdate:
      return "AssignedPodUpdate";
    case QueueEvent::kAssignedPodDelete:
      return "AssignedPodDelete";
    case QueueEvent::kNodeAdd:
      return "NodeAdd";
    case QueueEvent::kNodeSpecUnschedulableChange:
      return "NodeSpecUnschedulableChange";
    case QueueEvent::kNodeAllocatableChange:
      return "NodeAllocatableChange";
    case QueueEvent::kNodeLabelChange:
      return "NodeLabelChange";
    case QueueEvent::kNodeTaintChange:
      return "NodeTaintChange";
    case QueueEvent::kNodeConditionChange:
      return "NodeConditionChange";
    case QueueEvent::kPvAdd:
      return "PvAdd";
    case QueueEvent::kPvUpdate:
      return "PvUpdate";
    case QueueEvent::kPvcAdd:
      return "PvcAdd";
    case QueueEvent::kPvcUpdate:
      return "PvcUpdate";
    case QueueEvent::kStorageClassAdd:
      return "StorageClassAdd";
    case QueueEvent::kServiceAdd:
      return "ServiceAdd";
    case QueueEvent::kServiceUpdate:
      return "ServiceUpdate";
    case QueueEvent::kServiceDelete:
      return "ServiceDelete";
    case QueueEvent::kCSINodeAdd:
      return "CSINodeAdd";
    case QueueEvent::kCSINodeUpdate:
      return "CSINodeUpdate";
  }
  return "Unknown";
}

}  // namespace koord::roles::scheduler
