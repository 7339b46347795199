#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "fixture.h"
#include "queue/scheduling_queue.h"

namespace koord::roles::scheduler::queue_testing {
namespace {

TEST_CASE("backoff doubles per attempt from the initial value and stops at the max",
          "[scheduler][queue][backoff]") {
  struct Case {
    std::chrono::nanoseconds initial;
    std::chrono::nanoseconds max;
    std::vector<std::chrono::nanoseconds> want;  // for attempts 1, 2, ...
  };
  const std::vector<Case> cases = {
      {1s, 10s, {1s, 2s, 4s, 8s, 10s, 10s}},
      {2s, 5s, {2s, 4s, 5s, 5s}},
      {3s, 3s, {3s, 3s}},
      {500ms, 3s, {500ms, 1s, 2s, 3s, 3s}},
  };
  for (const auto& c : cases) {
    for (std::size_t i = 0; i < c.want.size(); ++i) {
      const int attempts = static_cast<int>(i) + 1;
      INFO("initial " << c.initial.count() << "ns, max " << c.max.count() << "ns, attempts "
                      << attempts);
      CHECK(podBackoffDuration(attempts, c.initial, c.max) == c.want[i]);
    }
  }
  // Zero attempts counts as one; a huge attempt count neither overflows nor passes the max.
  CHECK(podBackoffDuration(0, 1s, 10s) == 1s);
  CHECK(podBackoffDuration(1000, 1s, 10s) == 10s);
  CHECK(podBackoffDuration(100, 1s, std::chrono::hours(24 * 365 * 100)) ==
        std::chrono::hours(24 * 365 * 100));
}

// Each attempt count waits 1, 2, 4, 8, 10, 10 s in podBackoffQ before flushBackoffQCompleted
// lets it into activeQ: not a nanosecond earlier.
TEST_CASE("a pod leaves backoffQ exactly when its backoff expires", "[scheduler][queue][backoff]") {
  const std::vector<std::chrono::seconds> want = {1s, 2s, 4s, 8s, 10s, 10s};
  for (std::size_t i = 0; i < want.size(); ++i) {
    const int attempts = static_cast<int>(i) + 1;
    INFO("attempts " << attempts);
    FakeNow clock;
    auto q = makeQueue(clock);
    auto pod = makePod("p");
    // A move request in cycle 0 sends a failure of cycle 0 to backoffQ.
    q->moveAllToActiveOrBackoffQueue(QueueEvent::kNodeAdd);
    REQUIRE(q->addUnschedulableIfNotPresent(QueuedPodInfo{.pod = pod, .attempts = attempts}, 0)
                .has_value());
    REQUIRE(q->sizes().backoff == 1);

    clock.advance(want[i] - 1ns);
    q->flushBackoffQCompleted();
    CHECK(q->sizes().backoff == 1);
    CHECK(q->sizes().active == 0);

    clock.advance(1ns);
    q->flushBackoffQCompleted();
    CHECK(q->sizes().backoff == 0);
    REQUIRE(q->sizes().active == 1);
    CHECK(popNow(*q).attempts == attempts + 1);
  }
}

TEST_CASE("the backoff settings come from the options", "[scheduler][queue][backoff]") {
  FakeNow clock;
  SchedulingQueueOptions options;
  options.pod_initial_backoff = 3s;
  options.pod_max_backoff = 5s;
  auto q = makeQueue(clock, options);
  makeUnschedulable(*q, makePod("one"), 1);  // 3 s
  makeUnschedulable(*q, makePod("two"), 2);  // 6 s capped to 5 s
  clock.advance(2s);
  q->moveAllToActiveOrBackoffQueue(QueueEvent::kNodeAdd);
  CHECK(q->sizes().backoff == 2);
  clock.advance(1s);
  q->flushBackoffQCompleted();
  CHECK(drainActive(*q) == std::vector<std::string>{"one"});
  clock.advance(2s - 1ns);
  q->flushBackoffQCompleted();
  CHECK(q->sizes().backoff == 1);
  clock.advance(1ns);
  q->flushBackoffQCompleted();
  CHECK(drainActive(*q) == std::vector<std::string>{"two"});
}

TEST_CASE("backoffQ releases pods in expiry order, several per flush",
          "[scheduler][queue][backoff]") {
  FakeNow clock;
  auto q = makeQueue(clock);
  q->moveAllToActiveOrBackoffQueue(QueueEvent::kNodeAdd);
  // Equal priority: activeQ orders them by timestamp, i.e. by when they failed.
  REQUIRE(q->addUnschedulableIfNotPresent(QueuedPodInfo{.pod = makePod("eight"), .attempts = 4}, 0)
              .has_value());
  clock.advance(1ms);
  REQUIRE(q->addUnschedulableIfNotPresent(QueuedPodInfo{.pod = makePod("one"), .attempts = 1}, 0)
              .has_value());
  clock.advance(1ms);
  REQUIRE(q->addUnschedulableIfNotPresent(QueuedPodInfo{.pod = makePod("two"), .attempts = 2}, 0)
              .has_value());
  clock.advance(3s);
  q->flushBackoffQCompleted();
  CHECK(q->sizes().backoff == 1);
  CHECK(drainActive(*q) == std::vector<std::string>{"one", "two"});
  clock.advance(5s);
  q->flushBackoffQCompleted();
  CHECK(drainActive(*q) == std::vector<std::string>{"eight"});
}

}  // namespace
}  // namespace koord::roles::scheduler::queue_testing
