#include "koord/kube/work_queue.h"

#include "koord/core/metrics.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

namespace koord::kube {

ItemExponentialFailureRateLimiter::ItemExponentialFailureRateLimiter(
    std::chrono::nanoseconds base_delay, std::chrono::nanoseconds max_delay)
    : base_(base_delay), max_(max_delay) {}

std::chrono::nanoseconds ItemExponentialFailureRateLimiter::when(const std::string& item) {
  std::lock_guard lock(mu_);
  const int exp = failures_[item]++;
  // In floating point so a long failure history saturates at the cap instead of overflowing.
  const double backoff = static_cast<double>(base_.count()) * std::pow(2.0, exp);
  if (backoff >= static_cast<double>(max_.count()))
    return max_;
  return std::chrono::nanoseconds(static_cast<std::int64_t>(backoff));
}

void ItemExponentialFailureRateLimiter::forget(const std::string& item) {
  std::lock_guard lock(mu_);
  failures_.erase(item);
}

int ItemExponentialFailureRateLimiter::numRequeues(const std::string& item) {
  std::lock_guard lock(mu_);
  auto it = failures_.find(item);
  return it == failures_.end() ? 0 : it->second;
}

BucketRateLimiter::BucketRateLimiter(double qps, int burst, Clock& clock)
    : bucket_(qps, burst, clock) {}

std::chrono::nanoseconds BucketRateLimiter::when(const std::string&) {
  return bucket_.acquire();
}

void BucketRateLimiter::forget(const std::string&) {}

int BucketRateLimiter::numRequeues(const std::string&) {
  return 0;
}

MaxOfRateLimiter::MaxOfRateLimiter(std::vector<std::unique_ptr<ItemRateLimiter>> limiters)
    : limiters_(std::move(limiters)) {}

std::chrono::nanoseconds MaxOfRateLimiter::when(const std::string& item) {
  // Every limiter is asked, not just until the largest: each one records the failure.
  std::chrono::nanoseconds longest{0};
  for (auto& l : limiters_)
    longest = std::max(longest, l->when(item));
  return longest;
}

void MaxOfRateLimiter::forget(const std::string& item) {
  for (auto& l : limiters_)
    l->forget(item);
}

int MaxOfRateLimiter::numRequeues(const std::string& item) {
  int most = 0;
  for (auto& l : limiters_)
    most = std::max(most, l->numRequeues(item));
  return most;
}

std::unique_ptr<ItemRateLimiter> defaultControllerRateLimiter(Clock& clock) {
  std::vector<std::unique_ptr<ItemRateLimiter>> limiters;
  limiters.push_back(std::make_unique<ItemExponentialFailureRateLimiter>(
      std::chrono::milliseconds(5), std::chrono::seconds(1000)));
  limiters.push_back(std::make_unique<BucketRateLimiter>(10.0, 100, clock));
  return std::make_unique<MaxOfRateLimiter>(std::move(limiters));
}

WorkQueueMetrics workQueueMetrics(metrics::Registry& registry, const std::string& name) {
  // client-go's buckets: 10 ns to 10 s by tens.
  std::vector<double> buckets;
  for (double b = 1e-8; buckets.size() < 10; b *= 10)
    buckets.push_back(b);
  WorkQueueMetrics m;
  m.depth = &registry.gauge("workqueue_depth", "Current depth of workqueue", {"name"}).with({name});
  m.adds =
      &registry
           .counter("workqueue_adds_total", "Total number of adds handled by workqueue", {"name"})
           .with({name});
  m.queue_duration = &registry
                          .histogram("workqueue_queue_duration_seconds",
                                     "How long in seconds an item stays in workqueue before being "
                                     "requested.",
                                     {"name"}, buckets)
                          .with({name});
  m.work_duration = &registry
                         .histogram("workqueue_work_duration_seconds",
                                    "How long in seconds processing an item from workqueue takes.",
                                    {"name"}, buckets)
                         .with({name});
  m.unfinished_work =
      &registry
           .gauge("workqueue_unfinished_work_seconds",
                  "How many seconds of work has done that is in progress and hasn't been observed "
                  "by work_duration. Large values indicate stuck threads. One can deduce the "
                  "number of stuck threads by observing the rate at which this increases.",
                  {"name"})
           .with({name});
  m.longest_running = &registry
                           .gauge("workqueue_longest_running_processor_seconds",
                                  "How many seconds has the longest running processor for "
                                  "workqueue been running.",
                                  {"name"})
                           .with({name});
  m.retries = &registry
                   .counter("workqueue_retries_total",
                            "Total number of retries handled by workqueue", {"name"})
                   .with({name});
  return m;
}

namespace {

// How often the in-progress gauges are refreshed (client-go's updatePeriod).
constexpr auto kUnfinishedWorkPeriod = std::chrono::milliseconds(500);

double secondsBetween(std::chrono::steady_clock::time_point from,
                      std::chrono::steady_clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

}  // namespace

WorkQueue::WorkQueue(std::unique_ptr<ItemRateLimiter> limiter, WorkQueueMetrics metrics)
    : limiter_(limiter ? std::move(limiter) : defaultControllerRateLimiter()),
      metrics_(metrics),
      measured_(metrics.depth != nullptr || metrics.adds != nullptr ||
                metrics.queue_duration != nullptr || metrics.work_duration != nullptr ||
                metrics.unfinished_work != nullptr || metrics.longest_running != nullptr ||
                metrics.retries != nullptr),
      waiter_([this] { waitLoop(); }) {}

void WorkQueue::updateUnfinishedWork(TimePoint now) {
  double total = 0;
  double longest = 0;
  for (const auto& [key, started] : processing_started_) {
    const double s = secondsBetween(started, now);
    total += s;
    longest = std::max(longest, s);
  }
  if (metrics_.unfinished_work != nullptr)
    metrics_.unfinished_work->set(total);
  if (metrics_.longest_running != nullptr)
    metrics_.longest_running->set(longest);
}

WorkQueue::~WorkQueue() {
  shutDown();
}

void WorkQueue::add(const std::string& key) {
  {
    std::lock_guard lock(mu_);
    if (shutting_down_ || !dirty_.insert(key).second)
      return;
    if (measured_) {
      if (metrics_.adds != nullptr)
        metrics_.adds->inc();
      if (metrics_.depth != nullptr)
        metrics_.depth->add(1);
      added_at_.try_emplace(key, std::chrono::steady_clock::now());
    }
    if (processing_.count(key) != 0)
      return;  // done() queues it
    queue_.push_back(key);
  }
  cv_.notify_one();
}

std::optional<std::string> WorkQueue::get() {
  std::unique_lock lock(mu_);
  cv_.wait(lock, [this] { return !queue_.empty() || shutting_down_; });
  if (queue_.empty())
    return std::nullopt;
  std::string key = std::move(queue_.front());
  queue_.pop_front();
  processing_.insert(key);
  dirty_.erase(key);
  if (measured_) {
    const auto now = std::chrono::steady_clock::now();
    if (metrics_.depth != nullptr)
      metrics_.depth->add(-1);
    if (auto it = added_at_.find(key); it != added_at_.end()) {
      if (metrics_.queue_duration != nullptr)
        metrics_.queue_duration->observe(secondsBetween(it->second, now));
      added_at_.erase(it);
    }
    processing_started_[key] = now;
  }
  return key;
}

void WorkQueue::done(const std::string& key) {
  {
    std::lock_guard lock(mu_);
    processing_.erase(key);
    if (measured_) {
      if (auto it = processing_started_.find(key); it != processing_started_.end()) {
        if (metrics_.work_duration != nullptr)
          metrics_.work_duration->observe(
              secondsBetween(it->second, std::chrono::steady_clock::now()));
        processing_started_.erase(it);
      }
    }
    if (dirty_.count(key) == 0)
      return;
    queue_.push_back(key);
  }
  cv_.notify_one();
}

std::size_t WorkQueue::len() const {
  std::lock_guard lock(mu_);
  return queue_.size();
}

void WorkQueue::shutDown() {
  {
    std::lock_guard lock(mu_);
    shutting_down_ = true;
  }
  cv_.notify_all();
  {
    std::lock_guard lock(waiting_mu_);
    waiting_stop_ = true;
  }
  waiting_cv_.notify_all();
  std::call_once(join_once_, [this] { waiter_.join(); });
}

bool WorkQueue::shuttingDown() const {
  std::lock_guard lock(mu_);
  return shutting_down_;
}

void WorkQueue::addAfter(const std::string& key, std::chrono::nanoseconds delay) {
  if (shuttingDown())
    return;
  if (delay.count() <= 0) {
    add(key);
    return;
  }
  const auto ready = std::chrono::steady_clock::now() +
                     std::chrono::duration_cast<std::chrono::steady_clock::duration>(delay);
  bool earliest = false;
  {
    std::lock_guard lock(waiting_mu_);
    if (waiting_stop_)
      return;
    auto it = waiting_by_key_.find(key);
    if (it != waiting_by_key_.end()) {
      if (it->second.first <= ready)
        return;
      waiting_.erase({it->second.first, it->second.second, key});
      waiting_by_key_.erase(it);
    }
    const auto seq = waiting_seq_++;
    auto pos = waiting_.emplace(ready, seq, key).first;
    waiting_by_key_.emplace(key, std::make_pair(ready, seq));
    earliest = pos == waiting_.begin();
  }
  // Only a new head changes when the waiting thread must wake.
  if (earliest)
    waiting_cv_.notify_one();
}

void WorkQueue::waitLoop() {
  TimePoint next_metrics_update = std::chrono::steady_clock::now();
  std::unique_lock lock(waiting_mu_);
  while (!waiting_stop_) {
    const TimePoint now = std::chrono::steady_clock::now();
    // The in-progress gauges are refreshed on this thread, which wakes for them when measured.
    if (measured_ && now >= next_metrics_update) {
      lock.unlock();
      {
        std::lock_guard queue_lock(mu_);
        updateUnfinishedWork(now);
      }
      lock.lock();
      next_metrics_update = now + kUnfinishedWorkPeriod;
      continue;
    }
    if (waiting_.empty()) {
      if (measured_)
        waiting_cv_.wait_until(lock, next_metrics_update);
      else
        waiting_cv_.wait(lock);
      continue;
    }
    // A copy: the head may be replaced while the lock is released during the wait.
    const TimePoint ready = std::get<0>(*waiting_.begin());
    if (now < ready) {
      waiting_cv_.wait_until(lock, measured_ ? std::min(ready, next_metrics_update) : ready);
      continue;
    }
    std::string due = std::get<2>(*waiting_.begin());
    waiting_by_key_.erase(due);
    waiting_.erase(waiting_.begin());
    // add() takes the queue's lock; never hold both, so add() and addAfter() cannot deadlock.
    lock.unlock();
    add(due);
    lock.lock();
  }
}

void WorkQueue::addRateLimited(const std::string& key) {
  if (metrics_.retries != nullptr && !shuttingDown())
    metrics_.retries->inc();
  addAfter(key, limiter_->when(key));
}

void WorkQueue::forget(const std::string& key) {
  limiter_->forget(key);
}

int WorkQueue::numRequeues(const std::string& key) {
  return limiter_->numRequeues(key);
}

}  // namespace koord::kube
