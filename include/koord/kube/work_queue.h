// The work queue controllers reconcile from (client-go's workqueue): keys deduplicated while
// queued, never processed by two workers at once, delayed and rate-limited re-adds on failure.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "koord/core/clock.h"
#include "koord/kube/rate_limiter.h"

namespace koord::metrics {
class Counter;
class Gauge;
class Histogram;
class Registry;
}  // namespace koord::metrics

namespace koord::kube {

/// One queue's series of client-go's workqueue metrics (workqueue_* with label name); a null
/// member is not recorded.
struct WorkQueueMetrics {
  metrics::Gauge* depth = nullptr;
  metrics::Counter* adds = nullptr;
  metrics::Histogram* queue_duration = nullptr;
  metrics::Histogram* work_duration = nullptr;
  metrics::Gauge* unfinished_work = nullptr;
  metrics::Gauge* longest_running = nullptr;
  metrics::Counter* retries = nullptr;
};

/// Registers the workqueue_* families in `registry` (once; later calls find them) and returns
/// the series of the queue `name` (controller-runtime names them after the controller).
WorkQueueMetrics workQueueMetrics(metrics::Registry& registry, const std::string& name);

/// How long an item must wait before it is retried (client-go's workqueue.RateLimiter). Each
/// when() counts as one failure of the item. Implementations are thread-safe.
class ItemRateLimiter {
 public:
  virtual ~ItemRateLimiter() = default;
  virtual std::chrono::nanoseconds when(const std::string& item) = 0;
  /// The item succeeded: its failure history no longer counts.
  virtual void forget(const std::string& item) = 0;
  virtual int numRequeues(const std::string& item) = 0;
};

/// base * 2^failures, capped at `max_delay`, per item.
class ItemExponentialFailureRateLimiter : public ItemRateLimiter {
 public:
  ItemExponentialFailureRateLimiter(std::chrono::nanoseconds base_delay,
                                    std::chrono::nanoseconds max_delay);
  std::chrono::nanoseconds when(const std::string& item) override;
  void forget(const std::string& item) override;
  int numRequeues(const std::string& item) override;

 private:
  const std::chrono::nanoseconds base_;
  const std::chrono::nanoseconds max_;
  std::mutex mu_;
  std::unordered_map<std::string, int> failures_;
};

/// One token bucket for all items together, so a burst of failures cannot hammer the API
/// server; items have no history (numRequeues is 0, forget does nothing).
class BucketRateLimiter : public ItemRateLimiter {
 public:
  BucketRateLimiter(double qps, int burst, Clock& clock = Clock::real());
  std::chrono::nanoseconds when(const std::string& item) override;
  void forget(const std::string& item) override;
  int numRequeues(const std::string& item) override;

 private:
  RateLimiter bucket_;
};

/// The longest wait any of `limiters` asks for; numRequeues is the largest of theirs.
class MaxOfRateLimiter : public ItemRateLimiter {
 public:
  explicit MaxOfRateLimiter(std::vector<std::unique_ptr<ItemRateLimiter>> limiters);
  std::chrono::nanoseconds when(const std::string& item) override;
  void forget(const std::string& item) override;
  int numRequeues(const std::string& item) override;

 private:
  std::vector<std::unique_ptr<ItemRateLimiter>> limiters_;
};

/// client-go's DefaultControllerRateLimiter: per item 5 ms doubling to 1000 s, and 10 qps with a
/// burst of 100 over all items.
std::unique_ptr<ItemRateLimiter> defaultControllerRateLimiter(Clock& clock = Clock::real());

/// A FIFO of keys ("namespace/name") shared by a controller's workers. Thread-safe.
/// - A key added while queued is queued once.
/// - A key added while a worker processes it (between get and done) is queued again only when
///   done() is called, so no two workers ever hold the same key.
/// - addAfter() parks a key until its time; a background thread (real monotonic time) moves it
///   into the queue. Parking a key already parked keeps the earlier time.
/// - After shutDown(), adds are ignored, get() hands out what is queued and then nullopt.
class WorkQueue {
 public:
  /// With `metrics`, every add, hand-out and done is recorded as client-go records them, and the
  /// in-progress gauges (unfinished work, longest running) are refreshed twice a second.
  explicit WorkQueue(std::unique_ptr<ItemRateLimiter> limiter = defaultControllerRateLimiter(),
                     WorkQueueMetrics metrics = {});
  /// Shuts down and joins the delaying thread.
  ~WorkQueue();
  WorkQueue(const WorkQueue&) = delete;
  WorkQueue& operator=(const WorkQueue&) = delete;

  void add(const std::string& key);
  /// Blocks until a key is queued or the queue is shut down and empty (nullopt).
  std::optional<std::string> get();
  /// The worker is finished with `key` (whatever the outcome); required after every get().
  void done(const std::string& key);
  /// Keys waiting to be handed out (not those in process or parked by addAfter).
  std::size_t len() const;
  void shutDown();
  bool shuttingDown() const;

  /// Adds `key` once `delay` has passed; at once when delay <= 0.
  void addAfter(const std::string& key, std::chrono::nanoseconds delay);

  /// addAfter(key, limiter.when(key)): the retry path after a failed reconcile.
  void addRateLimited(const std::string& key);
  /// The key succeeded: stop counting its failures (its backoff restarts at the base).
  void forget(const std::string& key);
  int numRequeues(const std::string& key);

 private:
  using TimePoint = std::chrono::steady_clock::time_point;

  void waitLoop();
  /// The in-progress gauges from processing_started_; under mu_.
  void updateUnfinishedWork(TimePoint now);

  std::unique_ptr<ItemRateLimiter> limiter_;
  const WorkQueueMetrics metrics_;
  const bool measured_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::string> queue_;
  std::unordered_set<std::string> dirty_;       // queued, or re-added while processing
  std::unordered_set<std::string> processing_;  // handed out, done() not yet called
  // For the metrics only: when each dirty key was added and each handed-out key was taken.
  std::unordered_map<std::string, TimePoint> added_at_;
  std::unordered_map<std::string, TimePoint> processing_started_;
  bool shutting_down_ = false;

  // Parked keys ordered by (ready time, arrival) so equal times leave in the order they came.
  std::mutex waiting_mu_;
  std::condition_variable waiting_cv_;
  std::set<std::tuple<TimePoint, std::uint64_t, std::string>> waiting_;
  std::map<std::string, std::pair<TimePoint, std::uint64_t>> waiting_by_key_;
  std::uint64_t waiting_seq_ = 0;
  bool waiting_stop_ = false;

  std::once_flag join_once_;
  std::thread waiter_;
};

}  // namespace koord::kube
