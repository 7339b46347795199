#include "koord/kube/work_queue.h"

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

WorkQueue::WorkQueue(std::unique_ptr<ItemRateLimiter> limiter)
    : limiter_(limiter ? std::move(limiter) : defaultControllerRateLimiter()),
      waiter_([this] { waitLoop(); }) {}

WorkQueue::~WorkQueue() {
  shutDown();
}

void WorkQueue::add(const std::string& key) {
  {
    std::lock_guard lock(mu_);
    if (shutting_down_ || !dirty_.insert(key).second)
      return;
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
  return key;
}

void WorkQueue::done(const std::string& key) {
  {
    std::lock_guard lock(mu_);
    processing_.erase(key);
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
  std::unique_lock lock(waiting_mu_);
  while (!waiting_stop_) {
    if (waiting_.empty()) {
      waiting_cv_.wait(lock);
      continue;
    }
    // A copy: the head may be replaced while the lock is released during the wait.
    const TimePoint ready = std::get<0>(*waiting_.begin());
    if (std::chrono::steady_clock::now() < ready) {
      waiting_cv_.wait_until(lock, ready);
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
  addAfter(key, limiter_->when(key));
}

void WorkQueue::forget(const std::string& key) {
  limiter_->forget(key);
}

int WorkQueue::numRequeues(const std::string& key) {
  return limiter_->numRequeues(key);
}

}  // namespace koord::kube
