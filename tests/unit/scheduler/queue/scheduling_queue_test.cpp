#include "queue/scheduling_queue.h"

#include <catch2/catch.hpp>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "fixture.h"

namespace koord::roles::scheduler::queue_testing {
namespace {

TEST_CASE("activeQ pops by priority, then by the time the pod was queued", "[scheduler][queue]") {
  struct Added {
    std::string name;
    std::int32_t priority;
  };
  struct Case {
    std::string name;
    std::vector<Added> adds;  // one second apart
    std::vector<std::string> want;
  };
  const std::vector<Case> cases = {
      {"higher priority first", {{"low", 1}, {"high", 10}, {"mid", 5}}, {"high", "mid", "low"}},
      {"equal priority: first queued first", {{"a", 3}, {"b", 3}, {"c", 3}}, {"a", "b", "c"}},
      {"mixed", {{"a", 0}, {"b", 7}, {"c", 0}, {"d", 7}}, {"b", "d", "a", "c"}},
      {"negative priorities after zero", {{"neg", -5}, {"zero", 0}}, {"zero", "neg"}},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    FakeNow clock;
    auto q = makeQueue(clock);
    for (const auto& a : c.adds) {
      REQUIRE(q->add(makePod(a.name, a.priority)).has_value());
      clock.advance(1s);
    }
    CHECK(drainActive(*q) == c.want);
  }
}

TEST_CASE("a re-added pod takes a fresh timestamp and is queued once", "[scheduler][queue]") {
  FakeNow clock;
  auto q = makeQueue(clock);
  auto a = makePod("a");
  REQUIRE(q->add(a).has_value());
  clock.advance(1s);
  REQUIRE(q->add(makePod("b")).has_value());
  clock.advance(1s);
  REQUIRE(q->add(a).has_value());  // a second add of the same pod moves it behind b
  CHECK(q->sizes().active == 2);
  CHECK(drainActive(*q) == std::vector<std::string>{"b", "a"});
}

TEST_CASE("pop counts attempts and scheduling cycles", "[scheduler][queue]") {
  FakeNow clock;
  auto q = makeQueue(clock);
  CHECK(q->schedulingCycle() == 0);
  auto a = makePod("a");
  REQUIRE(q->add(a).has_value());
  const auto added_at = clock.now();
  clock.advance(5s);

  QueuedPodInfo first = popNow(*q);
  CHECK(first.attempts == 1);
  CHECK(q->schedulingCycle() == 1);
  CHECK(first.timestamp == added_at);
  CHECK(first.initial_attempt_timestamp == added_at);

  // Failed, moved back by an event, popped again: attempts carry over, the first-attempt time too.
  REQUIRE(q->addUnschedulableIfNotPresent(first, q->schedulingCycle()).has_value());
  clock.advance(10s);
  q->moveAllToActiveOrBackoffQueue(QueueEvent::kNodeAdd);
  QueuedPodInfo second = popNow(*q);
  CHECK(second.attempts == 2);
  CHECK(second.initial_attempt_timestamp == added_at);
  CHECK(second.timestamp == added_at + 5s);  // reset when it failed
  CHECK(q->schedulingCycle() == 2);
}

TEST_CASE("a failed pod goes to backoffQ only if a move request came in its cycle or later",
          "[scheduler][queue]") {
  struct Case {
    std::string name;
    bool move_before_pop;  // a move request before the pod was popped
    bool move_after_pop;   // one while it was being scheduled
    std::size_t want_backoff;
    std::size_t want_unschedulable;
  };
  const std::vector<Case> cases = {
      {"no move request: unschedulableQ", false, false, 0, 1},
      {"move request in an earlier cycle only: unschedulableQ", true, false, 0, 1},
      {"move request during its cycle: backoffQ", false, true, 1, 0},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    FakeNow clock;
    auto q = makeQueue(clock);
    REQUIRE(q->add(makePod("first")).has_value());
    (void)popNow(*q);  // cycle 1
    if (c.move_before_pop)
      q->moveAllToActiveOrBackoffQueue(QueueEvent::kNodeAdd);
    REQUIRE(q->add(makePod("p")).has_value());
    QueuedPodInfo p = popNow(*q);  // cycle 2
    const std::int64_t cycle = q->schedulingCycle();
    CHECK(cycle == 2);
    if (c.move_after_pop)
      q->moveAllToActiveOrBackoffQueue(QueueEvent::kNodeAdd);
    REQUIRE(q->addUnschedulableIfNotPresent(p, cycle).has_value());
    CHECK(q->sizes().backoff == c.want_backoff);
    CHECK(q->sizes().unschedulable == c.want_unschedulable);
    CHECK(q->sizes().active == 0);
  }
}

TEST_CASE("addUnschedulableIfNotPresent refuses a pod already queued", "[scheduler][queue]") {
  FakeNow clock;
  auto q = makeQueue(clock);
  auto a = makePod("a");

  REQUIRE(q->add(a).has_value());
  auto in_active = q->addUnschedulableIfNotPresent(QueuedPodInfo{.pod = a}, 0);
  REQUIRE_FALSE(in_active.has_value());
  CHECK(in_active.error().message == "pod default/a is already present in the active queue");

  QueuedPodInfo popped = popNow(*q);
  REQUIRE(q->addUnschedulableIfNotPresent(popped, 5).has_value());
  auto again = q->addUnschedulableIfNotPresent(popped, 5);
  REQUIRE_FALSE(again.has_value());
  CHECK(again.error().message == "pod default/a is already present in the unschedulable queue");

  q->moveAllToActiveOrBackoffQueue(QueueEvent::kNodeAdd);  // still backing off: backoffQ
  REQUIRE(q->sizes().backoff == 1);
  auto in_backoff = q->addUnschedulableIfNotPresent(popped, 5);
  REQUIRE_FALSE(in_backoff.has_value());
  CHECK(in_backoff.error().message == "pod default/a is already present in the backoff queue");

  auto null_pod = q->addUnschedulableIfNotPresent(QueuedPodInfo{}, 0);
  REQUIRE_FALSE(null_pod.has_value());
  CHECK(null_pod.error().message == "info.pod: must not be null");
  auto null_add = q->add(nullptr);
  REQUIRE_FALSE(null_add.has_value());
  CHECK(null_add.error().message == "pod: must not be null");
}

TEST_CASE("moveAll sends pods still backing off to backoffQ and the others to activeQ",
          "[scheduler][queue]") {
  FakeNow clock;
  std::vector<std::pair<std::string, std::string>> incoming;
  SchedulingQueueOptions options;
  options.on_incoming = [&](std::string_view queue, QueueEvent event) {
    incoming.emplace_back(std::string(queue), std::string(toString(event)));
  };
  auto q = makeQueue(clock, options);
  makeUnschedulable(*q, makePod("short"), 1);  // 1 s backoff
  makeUnschedulable(*q, makePod("long"), 3);   // 4 s backoff
  CHECK(q->sizes().unschedulable == 2);
  CHECK(q->numUnschedulablePods() == 2);

  clock.advance(2s);
  incoming.clear();
  q->moveAllToActiveOrBackoffQueue(QueueEvent::kNodeAdd);
  CHECK(q->sizes().active == 1);
  CHECK(q->sizes().backoff == 1);
  CHECK(q->sizes().unschedulable == 0);
  std::sort(incoming.begin(), incoming.end());
  CHECK(incoming == std::vector<std::pair<std::string, std::string>>{{"active", "NodeAdd"},
                                                                     {"backoff", "NodeAdd"}});
  CHECK(popNow(*q).pod->name == "short");

  // The long one leaves backoffQ once its 4 s are over, not before.
  clock.advance(2s - 1ns);
  q->flushBackoffQCompleted();
  CHECK(q->sizes().backoff == 1);
  clock.advance(1ns);
  incoming.clear();
  q->flushBackoffQCompleted();
  CHECK(q->sizes().backoff == 0);
  CHECK(incoming ==
        std::vector<std::pair<std::string, std::string>>{{"active", "BackoffComplete"}});
  CHECK(popNow(*q).pod->name == "long");
}

TEST_CASE("flushUnschedulableQLeftover retries pods unschedulable for over 60 s",
          "[scheduler][queue]") {
  FakeNow clock;
  auto q = makeQueue(clock);
  makeUnschedulable(*q, makePod("old"), 1);
  clock.advance(30s);
  makeUnschedulable(*q, makePod("young"), 1);

  clock.advance(30s);  // old: exactly 60 s, not over
  q->flushUnschedulableQLeftover();
  CHECK(q->sizes().unschedulable == 2);

  clock.advance(1ns);
  q->flushUnschedulableQLeftover();
  CHECK(q->sizes().unschedulable == 1);
  CHECK(q->sizes().active == 1);  // its 1 s backoff is long over
  CHECK(popNow(*q).pod->name == "old");

  clock.advance(30s);
  q->flushUnschedulableQLeftover();
  CHECK(q->sizes().unschedulable == 0);
  CHECK(popNow(*q).pod->name == "young");
}

TEST_CASE("a leftover pod whose backoff outlasts 60 s goes to backoffQ", "[scheduler][queue]") {
  FakeNow clock;
  SchedulingQueueOptions options;
  options.pod_initial_backoff = 100s;
  options.pod_max_backoff = 100s;
  auto q = makeQueue(clock, options);
  makeUnschedulable(*q, makePod("slow"), 1);
  clock.advance(61s);
  q->flushUnschedulableQLeftover();
  CHECK(q->sizes().backoff == 1);
  CHECK(q->sizes().active == 0);
}

TEST_CASE("pendingPods and sizes cover all three sub-queues", "[scheduler][queue]") {
  FakeNow clock;
  auto q = makeQueue(clock);
  REQUIRE(q->add(makePod("active")).has_value());
  makeUnschedulable(*q, makePod("unsched"), 1);
  makeUnschedulable(*q, makePod("backoff"), 5);
  clock.advance(1s);
  // unsched's 1 s backoff is over, backoff's 10 s are not.
  q->moveAllToActiveOrBackoffQueue(QueueEvent::kNodeAllocatableChange);
  makeUnschedulable(*q, makePod("still"), 1);

  const QueueSizes s = q->sizes();
  CHECK(s.active == 2);
  CHECK(s.backoff == 1);
  CHECK(s.unschedulable == 1);
  CHECK(names(q->pendingPods()) ==
        std::vector<std::string>{"active", "backoff", "still", "unsched"});
}

TEST_CASE("create validates the backoff settings and the less function", "[scheduler][queue]") {
  const auto less = [](const QueuedPodInfo&, const QueuedPodInfo&) { return false; };
  struct Case {
    std::string name;
    std::chrono::nanoseconds initial;
    std::chrono::nanoseconds max;
    std::string want_error;  // empty: valid
  };
  const std::vector<Case> cases = {
      {"defaults", 1s, 10s, ""},
      {"equal", 3s, 3s, ""},
      {"zero initial", 0s, 10s, "podInitialBackoffSeconds: must be greater than 0, got 0ns"},
      {"max below initial", 5s, 2s,
       "podMaxBackoffSeconds: must be greater than or equal to podInitialBackoffSeconds "
       "(5000000000ns), got 2000000000ns"},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    SchedulingQueueOptions options;
    options.pod_initial_backoff = c.initial;
    options.pod_max_backoff = c.max;
    auto q = SchedulingQueue::create(less, options);
    if (c.want_error.empty()) {
      CHECK(q.has_value());
    } else {
      REQUIRE_FALSE(q.has_value());
      CHECK(q.error().message == c.want_error);
    }
  }
  auto no_less = SchedulingQueue::create(nullptr);
  REQUIRE_FALSE(no_less.has_value());
  CHECK(no_less.error().message == "queueSort: a less function is required");
}

TEST_CASE("queue events print as upstream names them", "[scheduler][queue]") {
  CHECK(toString(QueueEvent::kNodeAdd) == "NodeAdd");
  CHECK(toString(QueueEvent::kAssignedPodDelete) == "AssignedPodDelete");
  CHECK(toString(QueueEvent::kUnschedulableTimeout) == "UnschedulableTimeout");
  CHECK(toString(QueueEvent::kNodeSpecUnschedulableChange) == "NodeSpecUnschedulableChange");
  CHECK(toString(QueueEvent::kCSINodeUpdate) == "CSINodeUpdate");
}

TEST_CASE("unschedulableQ tells who enters and leaves it, with the plugins that refused",
          "[scheduler][queue]") {
  FakeNow clock;
  std::map<std::string, int> by_plugin;
  SchedulingQueueOptions options;
  options.on_unschedulable = [&](const QueuedPodInfo& info, int delta) {
    for (const auto& p : info.unschedulable_plugins)
      by_plugin[p] += delta;
  };
  auto q = makeQueue(clock, options);
  auto a = makePod("a");
  auto b = makePod("b");
  REQUIRE(q->add(a).has_value());
  REQUIRE(q->add(b).has_value());
  auto first = popNow(*q);
  auto second = popNow(*q);
  first.unschedulable_plugins = {"DeviceShare", "NodeResourcesFit"};
  second.unschedulable_plugins = {"NodeResourcesFit"};
  const std::int64_t cycle = q->schedulingCycle();
  REQUIRE(q->addUnschedulableIfNotPresent(first, cycle).has_value());
  REQUIRE(q->addUnschedulableIfNotPresent(second, cycle).has_value());
  CHECK(by_plugin == std::map<std::string, int>{{"DeviceShare", 1}, {"NodeResourcesFit", 2}});
  // An update that does not help keeps the pod there; deleting it takes it out.
  q->remove(*first.pod);
  CHECK(by_plugin == std::map<std::string, int>{{"DeviceShare", 0}, {"NodeResourcesFit", 1}});
  // A cluster event moves the rest out.
  q->moveAllToActiveOrBackoffQueue(QueueEvent::kNodeAdd);
  CHECK(by_plugin == std::map<std::string, int>{{"DeviceShare", 0}, {"NodeResourcesFit", 0}});
  CHECK(q->numUnschedulablePods() == 0);
}

}  // namespace
}  // namespace koord::roles::scheduler::queue_testing
