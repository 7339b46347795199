#include "queue/pod_nominator.h"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "fixture.h"

namespace koord::roles::scheduler::queue_testing {
namespace {

std::vector<std::string> nominated(const SchedulingQueue& q, std::string_view node) {
  return names(q.nominatedPodsForNode(node));
}

TEST_CASE("preemption nominates a pod to one node at a time", "[scheduler][queue][nominated]") {
  FakeNow clock;
  auto q = makeQueue(clock);
  auto a = makePod("a");
  auto b = makePod("b");
  REQUIRE(q->addNominatedPod(a, "node-1").has_value());
  REQUIRE(q->addNominatedPod(b, "node-1").has_value());
  CHECK(nominated(*q, "node-1") == std::vector<std::string>{"a", "b"});

  REQUIRE(q->addNominatedPod(a, "node-2").has_value());  // re-nominated elsewhere
  CHECK(nominated(*q, "node-1") == std::vector<std::string>{"b"});
  CHECK(nominated(*q, "node-2") == std::vector<std::string>{"a"});

  REQUIRE(q->addNominatedPod(a, "node-2").has_value());  // twice: still once
  CHECK(q->nominatedPodsForNode("node-2").size() == 1);

  q->deleteNominatedPodIfExists(*a);
  q->deleteNominatedPodIfExists(*a);  // absent: nothing happens
  CHECK(nominated(*q, "node-2").empty());
  CHECK(nominated(*q, "node-1") == std::vector<std::string>{"b"});
  CHECK(nominated(*q, "unknown").empty());

  auto null_pod = q->addNominatedPod(nullptr, "node-1");
  REQUIRE_FALSE(null_pod.has_value());
  CHECK(null_pod.error().message == "pod: must not be null");
}

TEST_CASE("queued pods are nominated from status.nominatedNodeName",
          "[scheduler][queue][nominated]") {
  FakeNow clock;
  auto q = makeQueue(clock);
  auto a = makePod("a");
  a->nominated_node_name = "node-1";
  REQUIRE(q->add(a).has_value());
  CHECK(nominated(*q, "node-1") == std::vector<std::string>{"a"});

  // Back from a failed cycle: still nominated. Without a status nomination, add clears it.
  QueuedPodInfo popped = popNow(*q);
  REQUIRE(q->addUnschedulableIfNotPresent(popped, q->schedulingCycle()).has_value());
  CHECK(nominated(*q, "node-1") == std::vector<std::string>{"a"});
  auto plain = makePod("plain");
  REQUIRE(q->addNominatedPod(plain, "node-3").has_value());
  REQUIRE(q->add(plain).has_value());
  CHECK(nominated(*q, "node-3").empty());

  // Removing the pod from the queue removes the nomination.
  q->remove(*a);
  CHECK(nominated(*q, "node-1").empty());
}

TEST_CASE("an update keeps an in-memory nomination unless the status names a node",
          "[scheduler][queue][nominated]") {
  struct Case {
    std::string name;
    std::string old_status;
    std::string new_status;
    std::string want_node;  // empty: not nominated
  };
  const std::vector<Case> cases = {
      {"neither version names a node: kept", "", "", "node-mem"},
      {"new version names a node: that one", "", "node-new", "node-new"},
      {"old version named it, new one drops it: dropped", "node-mem", "", ""},
      {"both name one: the new one", "node-mem", "node-new", "node-new"},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    FakeNow clock;
    auto q = makeQueue(clock);
    auto old_pod = makePod("p");
    old_pod->nominated_node_name = c.old_status;
    REQUIRE(q->add(old_pod).has_value());
    REQUIRE(q->addNominatedPod(old_pod, "node-mem").has_value());
    auto new_pod = copyOf(old_pod);
    new_pod->nominated_node_name = c.new_status;
    REQUIRE(q->update(old_pod, new_pod).has_value());
    for (const std::string node : {"node-mem", "node-new"}) {
      INFO(node);
      const auto pods = q->nominatedPodsForNode(node);
      if (node == c.want_node) {
        REQUIRE(pods.size() == 1);
        CHECK(pods.front() == new_pod);
      } else {
        CHECK(pods.empty());
      }
    }
  }
}

TEST_CASE("PodNominator keys by UID and reports the node", "[scheduler][queue][nominated]") {
  PodNominator n;
  auto a = makePod("a");
  n.add(a, "node-1");
  CHECK(n.nodeOf(a->uid) == "node-1");
  // The same name with another UID (a recreated pod) is another nomination.
  auto recreated = copyOf(a);
  recreated->uid = "other-uid";
  n.add(recreated, "node-1");
  CHECK(n.podsForNode("node-1").size() == 2);
  n.remove(*a);
  REQUIRE(n.podsForNode("node-1").size() == 1);
  CHECK(n.podsForNode("node-1").front()->uid == "other-uid");
  CHECK(n.nodeOf(a->uid).empty());
  n.add(a, "");  // neither an explicit nor a status node: not nominated
  CHECK(n.nodeOf(a->uid).empty());
}

}  // namespace
}  // namespace koord::roles::scheduler::queue_testing
