// The pods LoadAwareScheduling has placed or seen bound, per node, with their estimated usage:
// a NodeMetric lags placements by up to its report interval, so recent pods are estimated.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <vector>

#include "framework/pod_info.h"
#include "koord/core/string_map.h"
#include "plugins/loadaware/args.h"
#include "plugins/loadaware/estimator.h"
#include "plugins/loadaware/resource_vector.h"

namespace koord::roles::scheduler::loadaware {

using TimePoint = std::chrono::system_clock::time_point;
using NowFn = std::function<TimePoint()>;

struct AssignedPod {
  std::string uid;
  /// "namespace/name": how the NodeMetric's podsMetric names a pod.
  std::string key;
  /// Koordinator's priority class with its QoS default is koord-prod.
  bool prod = false;
  /// nullopt when the estimate is all zero (such a pod adds nothing anywhere).
  std::optional<ResourceVector> estimated;
  /// When it was scheduled (PodScheduled's transition, else when this cache first saw it).
  TimePoint assigned_at{};
  /// Until when it is estimated even though the NodeMetric reports its usage
  /// (estimatedSecondsAfterPodScheduled / AfterInitialized); nullopt: no such window.
  std::optional<TimePoint> estimate_until;
};

using AssignedPods = std::vector<AssignedPod>;

/// Thread-safe: Reserve/Unreserve and the pod informer write, Filter and Score read in
/// parallel. Each node's list is copied on write, so a reader holds an unchanging list.
class PodAssignCache {
 public:
  PodAssignCache(const LoadAwareSchedulingArgs& args, ResourceVectorizer vectorizer, NowFn now);

  /// Adds or refreshes the pod on `node`. Finished pods and an empty node are ignored.
  /// `assigned_at` nullopt keeps the time already recorded for the pod, else takes now().
  void assign(std::string_view node, const PodInfo& pod, std::optional<TimePoint> assigned_at,
              std::optional<TimePoint> initialized_at = std::nullopt);
  void unassign(std::string_view node, std::string_view uid);

  // The pod informer's events. `scheduled_at`/`initialized_at`: the PodScheduled and
  // Initialized conditions' lastTransitionTime when they are True.
  void onPodAdd(const PodInfo& pod, std::optional<TimePoint> scheduled_at,
                std::optional<TimePoint> initialized_at);
  void onPodUpdate(const PodInfo& old_pod, const PodInfo& new_pod,
                   std::optional<TimePoint> scheduled_at, std::optional<TimePoint> initialized_at);
  void onPodDelete(const PodInfo& pod);

  /// Null when no pod is recorded on the node.
  std::shared_ptr<const AssignedPods> podsOn(std::string_view node) const;
  bool contains(std::string_view node, std::string_view uid) const;

 private:
  std::optional<TimePoint> estimateUntil(const PodInfo& pod, TimePoint assigned_at,
                                         std::optional<TimePoint> initialized_at) const;

  Estimator estimator_;
  ResourceVectorizer vectorizer_;
  std::optional<std::int64_t> seconds_after_scheduled_;
  std::optional<std::int64_t> seconds_after_initialized_;
  bool allow_customize_ = false;
  NowFn now_;

  // Filter and Score read it for every node of every cycle: readers share the lock.
  mutable std::shared_mutex mu_;
  StringMap<std::shared_ptr<const AssignedPods>> nodes_;
};

}  // namespace koord::roles::scheduler::loadaware
