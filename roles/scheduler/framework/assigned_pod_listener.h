// For plugins that keep their own state about pods already on nodes (LoadAware's pod-assign
// cache): the scheduler hands them its assigned-pod informer events, as Koordinator's plugins
// register informer handlers through the framework handle.
#pragma once

#include "pod_info.h"

namespace koord::roles::scheduler {

/// Called on the informer's thread, serially; implementations must be safe against the
/// scheduling thread's Filter/Score/Reserve running at the same time.
class AssignedPodListener {
 public:
  virtual ~AssignedPodListener() = default;
  virtual void onAssignedPodAdd(const PodInfo& pod) = 0;
  virtual void onAssignedPodUpdate(const PodInfo& old_pod, const PodInfo& new_pod) = 0;
  virtual void onAssignedPodDelete(const PodInfo& pod) = 0;
};

}  // namespace koord::roles::scheduler
