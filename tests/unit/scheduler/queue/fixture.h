// Shared pieces of the scheduling queue tests: a settable monotonic clock, pod builders and a
// queue ordered by the real PrioritySort plugin.
#pragma once

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "framework/pod_info.h"
#include "plugins/upstream/queuesort/priority_sort.h"
#include "queue/scheduling_queue.h"

namespace koord::roles::scheduler::queue_testing {

using namespace std::chrono_literals;
using std::chrono::steady_clock;

/// Monotonic time that moves only when told to; readable from any thread.
class FakeNow {
 public:
  steady_clock::time_point now() const {
    return steady_clock::time_point(steady_clock::duration(ns_.load()));
  }
  void advance(std::chrono::nanoseconds step) { ns_ += step.count(); }
  std::function<steady_clock::time_point()> fn() {
    return [this] { return now(); };
  }

 private:
  std::atomic<std::int64_t> ns_{std::chrono::nanoseconds(1000s).count()};
};

inline std::shared_ptr<PodInfo> makePod(std::string name, std::int32_t priority = 0,
                                        std::string ns = "default") {
  auto p = std::make_shared<PodInfo>();
  p->namespace_ = std::move(ns);
  p->name = std::move(name);
  p->uid = p->namespace_ + "-" + p->name + "-uid";
  p->priority = priority;
  return p;
}

/// A copy of `pod` that the test may change (a new informer version of it).
inline std::shared_ptr<PodInfo> copyOf(const std::shared_ptr<PodInfo>& pod) {
  return std::make_shared<PodInfo>(*pod);
}

inline std::unique_ptr<SchedulingQueue> makeQueue(FakeNow& clock,
                                                  SchedulingQueueOptions options = {}) {
  options.now = clock.fn();
  auto sort = std::make_shared<upstream::PrioritySort>();
  auto q = SchedulingQueue::create(
      [sort](const QueuedPodInfo& a, const QueuedPodInfo& b) { return sort->less(a, b); },
      std::move(options));
  REQUIRE(q.has_value());
  return std::move(*q);
}

/// Pops one pod, failing the test if the queue is empty (pop would block).
inline QueuedPodInfo popNow(SchedulingQueue& q) {
  REQUIRE(q.sizes().active > 0);
  auto info = q.pop();
  REQUIRE(info.has_value());
  return std::move(*info);
}

/// Names of the pending pods, sorted, for order-free comparisons.
inline std::vector<std::string> names(std::vector<std::shared_ptr<const PodInfo>> pods) {
  std::vector<std::string> out;
  for (const auto& p : pods)
    out.push_back(p->name);
  std::sort(out.begin(), out.end());
  return out;
}

/// Pops everything in activeQ and returns the names in pop order.
inline std::vector<std::string> drainActive(SchedulingQueue& q) {
  std::vector<std::string> out;
  while (q.sizes().active > 0)
    out.push_back(popNow(q).pod->name);
  return out;
}

/// Puts `pod` into unschedulableQ as a pod that failed `attempts` times (the last failure now).
inline void makeUnschedulable(SchedulingQueue& q, std::shared_ptr<const PodInfo> pod,
                              int attempts = 1) {
  QueuedPodInfo info{.pod = std::move(pod), .attempts = attempts};
  // A cycle after any move request so far: it parks in unschedulableQ.
  REQUIRE(q.addUnschedulableIfNotPresent(std::move(info), q.schedulingCycle() + 1).has_value());
}

}  // namespace koord::roles::scheduler::queue_testing
