#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <future>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "fixture.h"
#include "queue/scheduling_queue.h"

namespace koord::roles::scheduler::queue_testing {
namespace {

// Real time only bounds the waits here; backoff never depends on it.
constexpr auto kStillBlocked = 100ms;
constexpr auto kBound = 10s;

/// Declared after the future of a blocked pop: should a check fail, the queue is closed before
/// the future's destructor waits for that pop, so a failing test cannot hang.
struct CloseOnExit {
  SchedulingQueue& q;
  ~CloseOnExit() { q.close(); }
};

TEST_CASE("pop blocks until a pod is added", "[scheduler][queue][pop]") {
  FakeNow clock;
  auto q = makeQueue(clock);
  auto popped = std::async(std::launch::async, [&] { return q->pop(); });
  CloseOnExit guard{*q};
  CHECK(popped.wait_for(kStillBlocked) == std::future_status::timeout);

  REQUIRE(q->add(makePod("p")).has_value());
  REQUIRE(popped.wait_for(kBound) == std::future_status::ready);
  const std::optional<QueuedPodInfo> info = popped.get();
  REQUIRE(info.has_value());
  CHECK(info->pod->name == "p");
  CHECK(q->schedulingCycle() == 1);
}

TEST_CASE("pop wakes when backoff or an event makes a pod active", "[scheduler][queue][pop]") {
  FakeNow clock;
  auto q = makeQueue(clock);
  makeUnschedulable(*q, makePod("waiting"), 1);
  auto popped = std::async(std::launch::async, [&] { return q->pop(); });
  CloseOnExit guard{*q};
  CHECK(popped.wait_for(kStillBlocked) == std::future_status::timeout);
  clock.advance(2s);
  q->moveAllToActiveOrBackoffQueue(QueueEvent::kNodeAdd);
  REQUIRE(popped.wait_for(kBound) == std::future_status::ready);
  auto info = popped.get();
  REQUIRE(info.has_value());
  CHECK(info->pod->name == "waiting");
}

TEST_CASE("close wakes a blocked pop, which returns nothing", "[scheduler][queue][pop]") {
  FakeNow clock;
  auto q = makeQueue(clock);
  auto popped = std::async(std::launch::async, [&] { return q->pop(); });
  CloseOnExit guard{*q};
  CHECK(popped.wait_for(kStillBlocked) == std::future_status::timeout);
  q->close();
  REQUIRE(popped.wait_for(kBound) == std::future_status::ready);
  CHECK_FALSE(popped.get().has_value());
  CHECK_FALSE(q->pop().has_value());  // and every later pop on an empty queue
  CHECK(q->schedulingCycle() == 0);
}

TEST_CASE("after close, pop hands out what activeQ holds, then nothing",
          "[scheduler][queue][pop]") {
  FakeNow clock;
  auto q = makeQueue(clock);
  REQUIRE(q->add(makePod("left")).has_value());
  q->close();
  auto first = q->pop();
  REQUIRE(first.has_value());
  CHECK(first->pod->name == "left");
  CHECK_FALSE(q->pop().has_value());
}

TEST_CASE("many producers and one consumer lose no pod", "[scheduler][queue][pop]") {
  FakeNow clock;
  auto q = makeQueue(clock);
  constexpr int kProducers = 4;
  constexpr int kEach = 200;
  auto consumer = std::async(std::launch::async, [&] {
    std::vector<std::string> got;
    while (auto info = q->pop())
      got.push_back(info->pod->name);
    return got;
  });
  CloseOnExit guard{*q};
  std::atomic<int> failed_adds{0};
  std::vector<std::thread> producers;
  for (int t = 0; t < kProducers; ++t) {
    producers.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) {
        // No Catch2 assertions off the main thread: count, check afterwards.
        if (!q->add(makePod("p" + std::to_string(t) + "-" + std::to_string(i))))
          ++failed_adds;
      }
    });
  }
  for (auto& p : producers)
    p.join();
  CHECK(failed_adds == 0);
  // Wait until the consumer has drained activeQ, then close: pop returns nullopt only when empty.
  const auto deadline = std::chrono::steady_clock::now() + kBound;
  while (q->sizes().active > 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(1ms);
  }
  q->close();
  REQUIRE(consumer.wait_for(kBound) == std::future_status::ready);
  std::vector<std::string> got = consumer.get();
  CHECK(got.size() == static_cast<std::size_t>(kProducers * kEach));
  std::sort(got.begin(), got.end());
  CHECK(std::adjacent_find(got.begin(), got.end()) == got.end());
  CHECK(q->schedulingCycle() == kProducers * kEach);
}

}  // namespace
}  // namespace koord::roles::scheduler::queue_testing
