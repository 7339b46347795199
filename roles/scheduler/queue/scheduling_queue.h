// The scheduler's pending pods (kube-scheduler 1.20's PriorityQueue): activeQ in QueueSort
// order, podBackoffQ by backoff expiry, unschedulableQ until a cluster event, plus nominations.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "framework/plugin.h"
#include "koord/kube/error.h"
#include "queue/pod_heap.h"
#include "queue/pod_nominator.h"
#include "queue/queue_event.h"

namespace koord::roles::scheduler {

inline constexpr std::chrono::seconds kDefaultPodInitialBackoff{1};
inline constexpr std::chrono::seconds kDefaultPodMaxBackoff{10};
/// A pod unschedulable for longer than this is retried even though no event suggested it.
inline constexpr std::chrono::seconds kUnschedulableQTimeInterval{60};
/// The periods at which the owner's timers call flushBackoffQCompleted() and
/// flushUnschedulableQLeftover() (upstream's Run()).
inline constexpr std::chrono::seconds kBackoffQFlushPeriod{1};
inline constexpr std::chrono::seconds kUnschedulableQFlushPeriod{30};

struct SchedulingQueueOptions {
  /// podInitialBackoffSeconds / podMaxBackoffSeconds of the KubeSchedulerConfiguration.
  std::chrono::nanoseconds pod_initial_backoff = kDefaultPodInitialBackoff;
  std::chrono::nanoseconds pod_max_backoff = kDefaultPodMaxBackoff;
  /// Monotonic time; empty means steady_clock::now. Tests inject a fake one.
  std::function<std::chrono::steady_clock::time_point()> now;
  /// Told of every pod entering a sub-queue (queue label, event), for
  /// scheduler_queue_incoming_pods_total. Called with the queue's lock held: it must not call
  /// back into the queue.
  std::function<void(std::string_view queue, QueueEvent event)> on_incoming;
  /// The profile's PreEnqueue plugins: false keeps the pod out of every sub-queue, gated, until
  /// an update passes. Empty lets every pod in. Called without the queue's lock, from informer
  /// threads: thread-safe, and it must not call back into the queue.
  std::function<bool(const PodInfo&)> pre_enqueue;
  /// The QueueSort plugin's sortHandle, taken for each pod entering the active queue; empty
  /// when it keeps none. Called with the queue's lock held.
  PodHeap::Handle sort_handle;
  /// Told, with +1 or -1, of every pod entering or leaving unschedulableQ (its
  /// unschedulable_plugins say which plugins refused it), for scheduler_unschedulable_pods.
  /// Called with the queue's lock held: it must not call back into the queue.
  std::function<void(const QueuedPodInfo& info, int delta)> on_unschedulable;
};

/// Errors name the configuration field: podInitialBackoffSeconds must be positive and
/// podMaxBackoffSeconds at least as large.
kube::Expected<void> validateSchedulingQueueOptions(const SchedulingQueueOptions& options);

/// initial doubled per attempt after the first, capped at max: attempts 1..6 with the defaults
/// give 1, 2, 4, 8, 10, 10 s. Fewer than one attempt counts as one.
std::chrono::nanoseconds podBackoffDuration(int attempts, std::chrono::nanoseconds initial,
                                            std::chrono::nanoseconds max);

/// Pods per sub-queue, for pending_pods{queue="active"|"backoff"|"unschedulable"}.
struct QueueSizes {
  std::size_t active = 0;
  std::size_t backoff = 0;
  std::size_t unschedulable = 0;
  std::size_t gated = 0;
};

/// Thread-safe: pop() blocks the scheduling thread while informer callbacks add, update and
/// move pods from the reactor. Holds no threads or timers of its own; the owner calls the two
/// flushes periodically. Pods are identified by namespace/name, nominations by UID.
class SchedulingQueue {
 public:
  using Less = std::function<bool(const QueuedPodInfo&, const QueuedPodInfo&)>;

  /// `less` is the profile's QueueSort plugin's order (required).
  static kube::Expected<std::unique_ptr<SchedulingQueue>> create(
      Less less, SchedulingQueueOptions options = {});

  SchedulingQueue(const SchedulingQueue&) = delete;
  SchedulingQueue& operator=(const SchedulingQueue&) = delete;

  /// A new pending pod: into activeQ (out of the other two should it be there), and nominated
  /// if its status says so; gated instead when a PreEnqueue plugin refuses it. Error only for
  /// a null pod.
  kube::Expected<void> add(std::shared_ptr<const PodInfo> pod);

  /// A pod that failed its scheduling cycle `pod_scheduling_cycle` (schedulingCycle() right
  /// after its pop). It goes to podBackoffQ when a move request came during or after that
  /// cycle (the event may have fixed what failed it), else to unschedulableQ. Its timestamp
  /// is reset to now. Error when the pod is already in one of the queues or is null.
  kube::Expected<void> addUnschedulableIfNotPresent(QueuedPodInfo info,
                                                    std::int64_t pod_scheduling_cycle);

  /// Incremented by every pop().
  std::int64_t schedulingCycle() const;

  /// Blocks until activeQ has a pod and takes its head (attempts incremented). nullopt once
  /// close() was called and activeQ is empty.
  std::optional<QueuedPodInfo> pop();

  /// An informer update of a pending pod. In activeQ or podBackoffQ it is replaced in place
  /// (keeping its timestamp and attempts). In unschedulableQ it is replaced, and when
  /// isPodUpdated() says the change may help, moved to podBackoffQ while its backoff lasts,
  /// else to activeQ. A pod in no queue goes to activeQ. `old_pod` may be null (unknown):
  /// then the pod counts as updated. A gated pod stays gated until the update passes every
  /// PreEnqueue plugin, then goes to activeQ. Error only for a null `new_pod`.
  kube::Expected<void> update(const std::shared_ptr<const PodInfo>& old_pod,
                              std::shared_ptr<const PodInfo> new_pod);

  /// Drops the pod from whichever queue holds it, and its nomination.
  void remove(const PodInfo& pod);

  /// A pod was bound (or a bound pod changed): unschedulable pods whose required pod affinity
  /// it satisfies are moved to activeQ or podBackoffQ.
  void assignedPodAdded(const PodInfo& pod);
  void assignedPodUpdated(const PodInfo& pod);

  /// A cluster event that may make any unschedulable pod schedulable: all of them move,
  /// those still backing off to podBackoffQ, the rest to activeQ.
  void moveAllToActiveOrBackoffQueue(QueueEvent event);
  /// kube-scheduler's Activate: these pods ("namespace/name") move from unschedulableQ or
  /// podBackoffQ straight to activeQ, backoff or not; keys of pods elsewhere are ignored.
  void activate(const std::vector<std::string>& keys);

  /// Every kBackoffQFlushPeriod: pods whose backoff expired move to activeQ.
  void flushBackoffQCompleted();
  /// Every kUnschedulableQFlushPeriod: pods unschedulable for over kUnschedulableQTimeInterval
  /// move to activeQ or podBackoffQ.
  void flushUnschedulableQLeftover();

  /// Wakes a blocked pop(); later pops return what activeQ still holds, then nullopt.
  void close();

  /// Preemption nominated `pod` to `node` (empty: its status.nominatedNodeName).
  kube::Expected<void> addNominatedPod(std::shared_ptr<const PodInfo> pod, const std::string& node);
  void deleteNominatedPodIfExists(const PodInfo& pod);
  std::vector<std::shared_ptr<const PodInfo>> nominatedPodsForNode(std::string_view node) const;
  bool hasNominatedPods() const;

  /// Every pending pod: activeQ, then podBackoffQ, then unschedulableQ, then the gated ones.
  std::vector<std::shared_ptr<const PodInfo>> pendingPods() const;
  QueueSizes sizes() const;
  std::size_t numUnschedulablePods() const;

 private:
  using TimePoint = std::chrono::steady_clock::time_point;

  SchedulingQueue(Less less, SchedulingQueueOptions options);

  TimePoint now() const;
  QueuedPodInfo newQueuedPodInfo(std::shared_ptr<const PodInfo> pod) const;
  TimePoint backoffExpiry(const QueuedPodInfo& info) const;
  bool isBackingOff(const QueuedPodInfo& info) const;
  void incoming(std::string_view queue, QueueEvent event) const;
  /// unschedulableQ's writes, each telling on_unschedulable.
  void putUnschedulable(const std::string& key, QueuedPodInfo info);
  /// Takes the pod out and hands it back (moved, not copied).
  QueuedPodInfo eraseUnschedulable(std::unordered_map<std::string, QueuedPodInfo>::iterator it);
  void eraseUnschedulable(const std::string& key);
  /// The unschedulable pods under `keys` to podBackoffQ or activeQ; records the move request.
  void movePodsToActiveOrBackoffQueue(const std::vector<std::string>& keys, QueueEvent event);
  std::vector<std::string> unschedulablePodsWithMatchingAffinityTerm(const PodInfo& pod) const;

  const std::chrono::nanoseconds initial_backoff_;
  const std::chrono::nanoseconds max_backoff_;
  const std::function<TimePoint()> now_;
  const std::function<void(std::string_view, QueueEvent)> on_incoming_;
  const std::function<bool(const PodInfo&)> pre_enqueue_;
  const std::function<void(const QueuedPodInfo&, int)> on_unschedulable_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  PodHeap active_;
  PodHeap backoff_;
  std::unordered_map<std::string, QueuedPodInfo> unschedulable_;
  /// Pods a PreEnqueue plugin refused; no event but their own update moves them.
  std::unordered_map<std::string, QueuedPodInfo> gated_;
  PodNominator nominator_;
  std::int64_t scheduling_cycle_ = 0;
  /// The scheduling cycle at the last move request; pods failing in it or earlier go to
  /// podBackoffQ rather than wait in unschedulableQ for an event that already happened.
  std::int64_t move_request_cycle_ = -1;
  bool closed_ = false;
};

}  // namespace koord::roles::scheduler
