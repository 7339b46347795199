// For plugins that keep their own state about every pod, pending or bound (Coscheduling's gang
// cache): the scheduler hands them each pod informer event once, before it queues or caches it.
#pragma once

#include "pod_info.h"

namespace koord::roles::scheduler {

/// Called on the pod informer's thread, serially, for every pod it holds whichever scheduler
/// it names; a pod moving from pending to bound is one update, not a delete and an add.
/// Implementations must be safe against the scheduling thread and the binding callbacks.
class PodListener {
 public:
  virtual ~PodListener() = default;
  virtual void onPodAdd(const PodInfo& pod) = 0;
  virtual void onPodUpdate(const PodInfo& old_pod, const PodInfo& new_pod) = 0;
  virtual void onPodDelete(const PodInfo& pod) = 0;
};

}  // namespace koord::roles::scheduler
