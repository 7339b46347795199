#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "catch_expected.h"

#include "cache/scheduler_cache.h"
#include "cache_fixtures.h"
#include "koord/apis/node_metric.h"

using namespace koord::roles::scheduler;
using namespace koord::roles::scheduler::testfx;
using namespace std::chrono_literals;

namespace {

const SchedulerCache::Clock::time_point kT0{};

std::vector<std::string> podKeys(const NodeInfo& info) {
  std::vector<std::string> out;
  for (const auto& p : info.pods)
    out.push_back(p->key());
  return out;
}

}  // namespace

TEST_CASE("assumePod counts the pod on its node and forgetPod restores the node") {
  SchedulerCache cache;
  REQUIRE(cache.addNode(makeNode("n1")));
  auto pod = makePod("p", "n1", 500, 1 << 20);
  REQUIRE(cache.assumePod(pod));
  CHECK(cache.isAssumedPod(pod->uid));

  Snapshot snap;
  cache.updateSnapshot(snap);
  const NodeInfo* n1 = snap.get("n1");
  REQUIRE(n1 != nullptr);
  CHECK(podKeys(*n1) == std::vector<std::string>{"default/p"});
  CHECK(n1->requested.milli_cpu == 500);
  CHECK(n1->requested.memory == 1 << 20);

  REQUIRE(cache.forgetPod(*pod));
  CHECK_FALSE(cache.isAssumedPod(pod->uid));
  CHECK_FALSE(cache.getPod(pod->uid));
  cache.updateSnapshot(snap);
  n1 = snap.get("n1");
  REQUIRE(n1 != nullptr);
  CHECK(n1->pods.empty());
  CHECK(n1->requested.milli_cpu == 0);
  CHECK(cache.counts().pods == 0);
}

TEST_CASE("an assumed pod expires ttl after finishBinding and never without it") {
  SchedulerCache cache(10s);
  REQUIRE(cache.addNode(makeNode("n1")));
  auto bound = makePod("bound", "n1");
  auto binding = makePod("binding", "n1");
  REQUIRE(cache.assumePod(bound));
  REQUIRE(cache.assumePod(binding));
  CHECK(cache.finishBinding(*bound, kT0));

  auto none = cache.cleanupAssumedPods(kT0 + 10s);  // the deadline itself is not past it
  REQUIRE(none);
  CHECK(*none == 0);
  CHECK(cache.isAssumedPod(bound->uid));

  auto one = cache.cleanupAssumedPods(kT0 + 11s);
  REQUIRE(one);
  CHECK(*one == 1);
  CHECK_FALSE(cache.isAssumedPod(bound->uid));
  CHECK_FALSE(cache.getPod(bound->uid));
  CHECK(cache.isAssumedPod(binding->uid));  // binding still in flight: kept
  CHECK(podKeys(*cache.nodeInfo("n1")) == std::vector<std::string>{"default/binding"});
  CHECK(cache.counts().assumed == 1);
}

TEST_CASE("the default assumed-pod TTL is kube-scheduler v1.20's 30 s") {
  SchedulerCache cache;
  REQUIRE(cache.addNode(makeNode("n1")));
  auto pod = makePod("p", "n1");
  REQUIRE(cache.assumePod(pod));
  cache.finishBinding(*pod, kT0);
  CHECK(*cache.cleanupAssumedPods(kT0 + 30s) == 0);
  CHECK(*cache.cleanupAssumedPods(kT0 + 31s) == 1);
}

TEST_CASE("the informer's add confirms an assumed pod") {
  SchedulerCache cache(10s);
  REQUIRE(cache.addNode(makeNode("n1")));
  REQUIRE(cache.addNode(makeNode("n2")));
  auto assumed = makePod("p", "n1", 100);
  REQUIRE(cache.assumePod(assumed));
  cache.finishBinding(*assumed, kT0);

  SECTION("on the same node: the informer's copy replaces the assumed one") {
    auto informer = rebound(*assumed, "n1", 300);
    REQUIRE(cache.addPod(informer));
    CHECK_FALSE(cache.isAssumedPod(assumed->uid));
    CHECK(*cache.getPod(assumed->uid) == informer);
    auto n1 = cache.nodeInfo("n1");
    REQUIRE(n1->pods.size() == 1);
    CHECK(n1->pods[0] == informer);
    CHECK(n1->requested.milli_cpu == 300);
  }
  SECTION("on another node: the pod moves there") {
    auto informer = rebound(*assumed, "n2", 100);
    REQUIRE(cache.addPod(informer));
    CHECK_FALSE(cache.isAssumedPod(assumed->uid));
    CHECK(cache.nodeInfo("n1")->pods.empty());
    CHECK(cache.nodeInfo("n1")->requested.milli_cpu == 0);
    CHECK(podKeys(*cache.nodeInfo("n2")) == std::vector<std::string>{"default/p"});
    CHECK(cache.nodeInfo("n2")->requested.milli_cpu == 100);
  }
  // Confirmed pods no longer expire.
  CHECK(*cache.cleanupAssumedPods(kT0 + 1h) == 0);
  CHECK(cache.getPod(assumed->uid));
  CHECK(cache.counts().pods == 1);
  CHECK(cache.counts().assumed == 0);
}

TEST_CASE("finishBinding after the informer confirmed the pod is a no-op") {
  SchedulerCache cache(10s);
  REQUIRE(cache.addNode(makeNode("n1")));
  auto pod = makePod("p", "n1");
  REQUIRE(cache.assumePod(pod));
  REQUIRE(cache.addPod(pod));
  CHECK_FALSE(cache.finishBinding(*pod, kT0));
  CHECK(*cache.cleanupAssumedPods(kT0 + 1h) == 0);
  CHECK(cache.getPod(pod->uid));
}

TEST_CASE("bound pods are updated and removed") {
  SchedulerCache cache;
  REQUIRE(cache.addNode(makeNode("n1")));
  auto pod = makePod("p", "n1", 100);
  REQUIRE(cache.addPod(pod));
  CHECK_FALSE(cache.isAssumedPod(pod->uid));
  CHECK(cache.nodeInfo("n1")->requested.milli_cpu == 100);

  auto bigger = rebound(*pod, "n1", 700);
  REQUIRE(cache.updatePod(*pod, bigger));
  CHECK(*cache.getPod(pod->uid) == bigger);
  CHECK(cache.nodeInfo("n1")->requested.milli_cpu == 700);
  CHECK(cache.nodeInfo("n1")->pods.size() == 1);

  REQUIRE(cache.removePod(*bigger));
  CHECK(cache.nodeInfo("n1")->pods.empty());
  CHECK(cache.nodeInfo("n1")->requested.milli_cpu == 0);
  CHECK_FALSE(cache.getPod(pod->uid));
}

TEST_CASE("a removed node with pods keeps a Node-less NodeInfo until its last pod goes") {
  SchedulerCache cache;
  REQUIRE(cache.addNode(makeNode("n1")));
  REQUIRE(cache.addNode(makeNode("n2")));
  auto a = makePod("a", "n1");
  auto b = makePod("b", "n1");
  REQUIRE(cache.addPod(a));
  REQUIRE(cache.addPod(b));
  REQUIRE(cache.removeNode("n1"));

  auto left = cache.nodeInfo("n1");
  REQUIRE(left != nullptr);
  CHECK(left->node == nullptr);
  CHECK(left->pods.size() == 2);
  CHECK(cache.counts().nodes == 2);
  Snapshot snap;
  cache.updateSnapshot(snap);
  CHECK(snap.size() == 1);
  CHECK(snap.get("n1") == nullptr);

  REQUIRE(cache.removePod(*a));
  CHECK(cache.nodeInfo("n1") != nullptr);
  REQUIRE(cache.removePod(*b));
  CHECK(cache.nodeInfo("n1") == nullptr);
  CHECK(cache.counts().nodes == 1);
  CHECK_FALSE(cache.removeNode("n1"));  // already gone
}

TEST_CASE("a pod may arrive before its node") {
  SchedulerCache cache;
  auto pod = makePod("early", "late-node", 200);
  REQUIRE(cache.addPod(pod));
  auto info = cache.nodeInfo("late-node");
  REQUIRE(info != nullptr);
  CHECK(info->node == nullptr);
  CHECK(info->requested.milli_cpu == 200);

  Snapshot snap;
  cache.updateSnapshot(snap);
  CHECK(snap.size() == 0);

  REQUIRE(cache.addNode(makeNode("late-node")));
  cache.updateSnapshot(snap);
  REQUIRE(snap.get("late-node") != nullptr);
  CHECK(snap.get("late-node")->requested.milli_cpu == 200);
  CHECK(podKeys(*snap.get("late-node")) == std::vector<std::string>{"default/early"});
}

TEST_CASE("a NodeMetric is attached to its node's NodeInfo under a new generation") {
  SchedulerCache cache;
  auto metric = std::make_shared<koord::apis::NodeMetric>();
  metric->name = "n1";

  SECTION("attached to an existing node, and detached again") {
    REQUIRE(cache.addNode(makeNode("n1")));
    const auto before = cache.nodeInfo("n1");
    REQUIRE(cache.setNodeMetric("n1", metric));
    const auto after = cache.nodeInfo("n1");
    CHECK(after != before);
    CHECK(after->node_metric == metric);
    CHECK(after->generation > before->generation);
    CHECK(before->node_metric == nullptr);  // the published NodeInfo did not change

    REQUIRE(cache.removeNodeMetric("n1"));
    CHECK(cache.nodeInfo("n1")->node_metric == nullptr);
    CHECK(cache.nodeInfo("n1")->generation > after->generation);
    CHECK_FALSE(cache.removeNodeMetric("n1"));
  }
  SECTION("kept for a node that arrives later") {
    REQUIRE(cache.setNodeMetric("n1", metric));
    CHECK(cache.nodeInfo("n1") == nullptr);
    REQUIRE(cache.addNode(makeNode("n1")));
    CHECK(cache.nodeInfo("n1")->node_metric == metric);
  }
  SECTION("survives pod changes on the node") {
    REQUIRE(cache.addNode(makeNode("n1")));
    REQUIRE(cache.setNodeMetric("n1", metric));
    REQUIRE(cache.addPod(makePod("p", "n1")));
    CHECK(cache.nodeInfo("n1")->node_metric == metric);
  }
}

TEST_CASE("cache errors name the pod and the node") {
  SchedulerCache cache;
  REQUIRE(cache.addNode(makeNode("n1")));
  REQUIRE(cache.addNode(makeNode("n2")));
  auto pod = makePod("p", "n1");

  struct Case {
    const char* what;
    std::function<koord::kube::Expected<void>()> call;
    std::vector<std::string> mentions;
  };
  const std::vector<Case> cases = {
      {"forget an unknown pod",
       [&] { return cache.forgetPod(*pod); },
       {"default/p", "n1", "wasn't assumed"}},
      {"assume twice",
       [&]() -> koord::kube::Expected<void> {
         if (auto first = cache.assumePod(pod); !first)
           return first;
         return cache.assumePod(pod);
       },
       {"default/p", "n1", "can't be assumed"}},
      {"forget on another node",
       [&] { return cache.forgetPod(*rebound(*pod, "n2", 100)); },
       {"default/p", "n1", "n2"}},
      {"add while assumed is a confirmation, add again is not",
       [&]() -> koord::kube::Expected<void> {
         if (auto first = cache.addPod(pod); !first)
           return first;
         return cache.addPod(pod);
       },
       {"default/p", "n1", "already in added state"}},
      {"forget a confirmed pod",
       [&] { return cache.forgetPod(*pod); },
       {"default/p", "wasn't assumed"}},
      {"update onto another node",
       [&] { return cache.updatePod(*pod, rebound(*pod, "n2", 1)); },
       {"default/p", "n1", "n2"}},
      {"remove from another node",
       [&] { return cache.removePod(*rebound(*pod, "n2", 1)); },
       {"default/p", "n1", "n2"}},
      {"update an unknown pod",
       [&] { return cache.updatePod(*makePod("q", "n1"), makePod("q", "n1")); },
       {"default/q", "n1", "cannot be updated"}},
      {"remove an unknown pod",
       [&] { return cache.removePod(*makePod("q", "n2")); },
       {"default/q", "n2", "cannot be removed"}},
      {"assume without a node",
       [&] { return cache.assumePod(makePod("q", "")); },
       {"default/q", "spec.nodeName"}},
      {"remove an unknown node", [&] { return cache.removeNode("n9"); }, {"n9"}},
      {"null NodeMetric", [&] { return cache.setNodeMetric("n1", nullptr); }, {"n1"}},
  };
  for (const auto& c : cases) {
    INFO(c.what);
    auto r = c.call();
    REQUIRE_FALSE(r);
    for (const auto& m : c.mentions) {
      INFO(r.error().message);
      CHECK(r.error().message.find(m) != std::string::npos);
    }
  }
  CHECK(cache.getPod(pod->uid));  // the refused calls left the bound pod alone
  CHECK(cache.nodeInfo("n1")->pods.size() == 1);
}

TEST_CASE("dump lists pod keys by node and the assumed set and counts follow") {
  SchedulerCache cache;
  REQUIRE(cache.addNode(makeNode("n1")));
  REQUIRE(cache.addPod(makePod("bound", "n1")));
  REQUIRE(cache.assumePod(makePod("assumed", "n1")));
  REQUIRE(cache.addPod(makePod("orphan", "gone")));

  const CacheDump d = cache.dump();
  REQUIRE(d.nodes.size() == 2);
  CHECK(d.nodes.at("n1").has_node);
  CHECK(d.nodes.at("n1").pods == std::vector<std::string>{"default/bound", "default/assumed"});
  CHECK_FALSE(d.nodes.at("gone").has_node);
  CHECK(d.nodes.at("gone").pods == std::vector<std::string>{"default/orphan"});
  CHECK(d.assumed == std::vector<std::string>{"default/assumed"});

  const CacheCounts c = cache.counts();
  CHECK(c.nodes == 2);
  CHECK(c.pods == 3);
  CHECK(c.assumed == 1);
}
