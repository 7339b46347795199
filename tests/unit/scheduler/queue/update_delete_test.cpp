#include <catch2/catch.hpp>

#include <functional>
#include <string>
#include <vector>

#include "fixture.h"
#include "queue/scheduling_queue.h"

namespace koord::roles::scheduler::queue_testing {
namespace {

enum class Where { kActive, kBackoff, kUnschedulable, kNowhere };

Where whereIs(SchedulingQueue& q) {
  const QueueSizes s = q.sizes();
  REQUIRE(s.active + s.backoff + s.unschedulable <= 1);
  if (s.active == 1)
    return Where::kActive;
  if (s.backoff == 1)
    return Where::kBackoff;
  if (s.unschedulable == 1)
    return Where::kUnschedulable;
  return Where::kNowhere;
}

/// Places `pod` in `where`; for the two retry queues it failed once at the clock's now, so its
/// 1 s backoff lasts until now + 1 s.
void place(SchedulingQueue& q, const std::shared_ptr<PodInfo>& pod, Where where) {
  switch (where) {
    case Where::kActive:
      REQUIRE(q.add(pod).has_value());
      break;
    case Where::kBackoff:
      q.moveAllToActiveOrBackoffQueue(QueueEvent::kNodeAdd);
      REQUIRE(q.addUnschedulableIfNotPresent(QueuedPodInfo{.pod = pod, .attempts = 1},
                                             q.schedulingCycle())
                  .has_value());
      break;
    case Where::kUnschedulable:
      makeUnschedulable(q, pod, 1);
      break;
    case Where::kNowhere:
      break;
  }
  REQUIRE(whereIs(q) == where);
}

TEST_CASE("update replaces the pod where it is, or moves it when it may have become schedulable",
          "[scheduler][queue][update]") {
  struct Case {
    std::string name;
    Where from;
    std::chrono::nanoseconds wait;  // after placing, before the update
    std::function<void(PodInfo&)> change;
    Where want;
  };
  const auto spec_change = [](PodInfo& p) { p.tolerations.push_back(kube::Toleration{}); };
  const auto label_change = [](PodInfo& p) { p.labels["app"] = "web"; };
  const auto status_change = [](PodInfo& p) {
    p.resource_version = "99";
    p.phase = PodPhase::kFailed;
  };
  const std::vector<Case> cases = {
      {"activeQ: stays", Where::kActive, 0s, spec_change, Where::kActive},
      {"backoffQ: stays, backoff kept", Where::kBackoff, 0s, spec_change, Where::kBackoff},
      {"unschedulableQ, spec changed, backing off: backoffQ", Where::kUnschedulable, 0s,
       spec_change, Where::kBackoff},
      {"unschedulableQ, labels changed, backoff over: activeQ", Where::kUnschedulable, 2s,
       label_change, Where::kActive},
      {"unschedulableQ, status only: stays", Where::kUnschedulable, 2s, status_change,
       Where::kUnschedulable},
      {"in no queue: activeQ", Where::kNowhere, 0s, spec_change, Where::kActive},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    FakeNow clock;
    auto q = makeQueue(clock);
    auto old_pod = makePod("p");
    place(*q, old_pod, c.from);
    clock.advance(c.wait);
    auto new_pod = copyOf(old_pod);
    c.change(*new_pod);
    REQUIRE(q->update(old_pod, new_pod).has_value());
    CHECK(whereIs(*q) == c.want);
    const auto pending = q->pendingPods();
    REQUIRE(pending.size() == 1);
    CHECK(pending.front() == new_pod);  // the new version is what the queue holds
  }
}

TEST_CASE("an update in backoffQ keeps the pod's backoff", "[scheduler][queue][update]") {
  FakeNow clock;
  auto q = makeQueue(clock);
  auto old_pod = makePod("p");
  place(*q, old_pod, Where::kBackoff);
  auto new_pod = copyOf(old_pod);
  new_pod->priority = 100;
  REQUIRE(q->update(old_pod, new_pod).has_value());
  clock.advance(1s - 1ns);
  q->flushBackoffQCompleted();
  CHECK(q->sizes().backoff == 1);
  clock.advance(1ns);
  q->flushBackoffQCompleted();
  QueuedPodInfo popped = popNow(*q);
  CHECK(popped.pod->priority == 100);
  CHECK(popped.attempts == 2);
}

TEST_CASE("an update in activeQ re-sorts it and keeps timestamp and attempts",
          "[scheduler][queue][update]") {
  FakeNow clock;
  auto q = makeQueue(clock);
  auto a = makePod("a", 1);
  auto b = makePod("b", 5);
  REQUIRE(q->add(a).has_value());
  const auto a_added = clock.now();
  clock.advance(1s);
  REQUIRE(q->add(b).has_value());
  auto a2 = copyOf(a);
  a2->priority = 10;
  clock.advance(1s);
  REQUIRE(q->update(a, a2).has_value());
  QueuedPodInfo first = popNow(*q);
  CHECK(first.pod == a2);
  CHECK(first.timestamp == a_added);
  CHECK(popNow(*q).pod->name == "b");
}

TEST_CASE("an update with no old version counts as a change", "[scheduler][queue][update]") {
  FakeNow clock;
  auto q = makeQueue(clock);
  auto pod = makePod("p");
  makeUnschedulable(*q, pod, 1);
  clock.advance(2s);
  REQUIRE(q->update(nullptr, copyOf(pod)).has_value());
  CHECK(q->sizes().active == 1);
  auto null_new = q->update(pod, nullptr);
  REQUIRE_FALSE(null_new.has_value());
  CHECK(null_new.error().message == "newPod: must not be null");
}

TEST_CASE("remove drops the pod from whichever queue holds it, and its nomination",
          "[scheduler][queue][delete]") {
  for (Where where : {Where::kActive, Where::kBackoff, Where::kUnschedulable, Where::kNowhere}) {
    INFO("queue " << static_cast<int>(where));
    FakeNow clock;
    auto q = makeQueue(clock);
    auto pod = makePod("p");
    auto other = makePod("other");
    place(*q, pod, where);
    makeUnschedulable(*q, other, 1);
    REQUIRE(q->addNominatedPod(pod, "node-1").has_value());

    q->remove(*pod);
    CHECK(names(q->pendingPods()) == std::vector<std::string>{"other"});
    CHECK(q->nominatedPodsForNode("node-1").empty());
  }
}

}  // namespace
}  // namespace koord::roles::scheduler::queue_testing
