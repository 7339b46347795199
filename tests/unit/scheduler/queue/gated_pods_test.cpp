#include <catch2/catch.hpp>

#include "fixture.h"
#include "plugins/upstream/schedulinggates/scheduling_gates.h"

namespace koord::roles::scheduler::queue_testing {
namespace {

// The queue gated by the real SchedulingGates plugin, as the scheduler wires a profile's
// PreEnqueue plugins.
std::unique_ptr<SchedulingQueue> gatedQueue(FakeNow& clock) {
  SchedulingQueueOptions options;
  auto gates = std::make_shared<upstream::SchedulingGates>();
  options.pre_enqueue = [gates](const PodInfo& pod) { return gates->preEnqueue(pod).ok(); };
  return makeQueue(clock, std::move(options));
}

TEST_CASE("queue: a pod with scheduling gates waits gated until an update removes them",
          "[scheduler][queue]") {
  FakeNow clock;
  auto q = gatedQueue(clock);
  auto gated = makePod("gated");
  gated->scheduling_gates = {"example.com/wait"};
  auto free = makePod("free");
  REQUIRE(q->add(gated).has_value());
  REQUIRE(q->add(free).has_value());
  CHECK(q->sizes().active == 1);
  CHECK(q->sizes().gated == 1);
  CHECK(q->pendingPods().size() == 2);
  auto popped = q->pop();
  REQUIRE(popped);
  CHECK(popped->pod->name == "free");

  // A move request (a node came) does not free a gated pod.
  q->moveAllToActiveOrBackoffQueue(QueueEvent::kNodeAdd);
  clock.advance(2min);
  q->flushUnschedulableQLeftover();
  q->flushBackoffQCompleted();
  CHECK(q->sizes().active == 0);
  CHECK(q->sizes().gated == 1);

  // An update that keeps a gate keeps it gated; one that removes the last lets it in.
  auto still = copyOf(gated);
  still->scheduling_gates = {"example.com/other"};
  REQUIRE(q->update(gated, still).has_value());
  CHECK(q->sizes().gated == 1);
  auto ungated = copyOf(still);
  ungated->scheduling_gates.clear();
  REQUIRE(q->update(still, ungated).has_value());
  CHECK(q->sizes().gated == 0);
  REQUIRE(q->sizes().active == 1);
  popped = q->pop();
  REQUIRE(popped);
  CHECK(popped->pod->name == "gated");
  CHECK(popped->pod->scheduling_gates.empty());
}

TEST_CASE("queue: a gated pod that is deleted leaves the queue", "[scheduler][queue]") {
  FakeNow clock;
  auto q = gatedQueue(clock);
  auto gated = makePod("gated");
  gated->scheduling_gates = {"a"};
  REQUIRE(q->add(gated).has_value());
  q->remove(*gated);
  CHECK(q->sizes().gated == 0);
  CHECK(q->pendingPods().empty());
}

TEST_CASE("queue: without PreEnqueue plugins a pod with gates is queued as before",
          "[scheduler][queue]") {
  FakeNow clock;
  auto q = makeQueue(clock);
  auto pod = makePod("p");
  pod->scheduling_gates = {"a"};
  REQUIRE(q->add(pod).has_value());
  CHECK(q->sizes().active == 1);
  CHECK(q->sizes().gated == 0);
}

}  // namespace
}  // namespace koord::roles::scheduler::queue_testing
