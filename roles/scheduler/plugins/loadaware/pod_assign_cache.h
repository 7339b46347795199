// The pods LoadAwareScheduling has placed or seen bound, per node, with their estimated usage:
// a NodeMetric lags placements by up to its report interval, so recent pods are estimated.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <utility>
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

/// Where node entries keep their generations: side by side in chunks that never move, since
/// Filter and Score read one per node per call and a scattered one costs a cache miss each.
class GenerationPool {
 public:
  GenerationPool() = default;
  GenerationPool(const GenerationPool&) = delete;
  GenerationPool& operator=(const GenerationPool&) = delete;

  std::atomic<std::uint64_t>* acquire();
  void release(std::atomic<std::uint64_t>* generation);

 private:
  static constexpr std::size_t kChunk = 1024;
  std::mutex mu_;
  std::vector<std::unique_ptr<std::atomic<std::uint64_t>[]>> chunks_;
  std::vector<std::atomic<std::uint64_t>*> free_;
};

/// One node's entry in the cache. It stays the node's entry for as long as anyone holds it, so
/// Filter and Score keep it per node and learn of changes from one atomic load, not a lookup by
/// name under a lock.
class NodePods {
 public:
  explicit NodePods(std::shared_ptr<GenerationPool> pool);
  ~NodePods();
  NodePods(const NodePods&) = delete;
  NodePods& operator=(const NodePods&) = delete;

  /// Moves on every change of the node's pods (0 before the first one).
  const std::atomic<std::uint64_t>& generation() const { return *generation_; }

 private:
  friend class PodAssignCache;
  std::shared_ptr<GenerationPool> pool_;
  std::atomic<std::uint64_t>* generation_;
  std::shared_ptr<const AssignedPods> pods_;  // guarded by the cache's lock; null when none
};

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
  /// The node's entry, made when there is none yet (so that later assignments move its
  /// generation); `node` empty gives null.
  std::shared_ptr<const NodePods> entry(std::string_view node);
  /// The entry's pods (null when none) and the generation they are of, read together.
  std::pair<std::shared_ptr<const AssignedPods>, std::uint64_t> read(const NodePods& entry) const;
  bool contains(std::string_view node, std::string_view uid) const;

 private:
  /// Under mu_: replaces the node's pods (null: none) and moves its generation.
  void publish(NodePods& entry, std::shared_ptr<const AssignedPods> pods);
  /// Under mu_: drops entries without pods that nobody else holds, once there are many.
  void trimLocked();

  std::optional<TimePoint> estimateUntil(const PodInfo& pod, TimePoint assigned_at,
                                         std::optional<TimePoint> initialized_at) const;

  Estimator estimator_;
  ResourceVectorizer vectorizer_;
  std::optional<std::int64_t> seconds_after_scheduled_;
  std::optional<std::int64_t> seconds_after_initialized_;
  bool allow_customize_ = false;
  NowFn now_;

  // Filter and Score take it only when a node's generation moved: readers share the lock.
  mutable std::shared_mutex mu_;
  StringMap<std::shared_ptr<NodePods>> nodes_;
  std::shared_ptr<GenerationPool> generations_ = std::make_shared<GenerationPool>();
  std::uint64_t last_generation_ = 0;
  std::size_t trim_at_ = 1024;
};

}  // namespace koord::roles::scheduler::loadaware
