// kube-scheduler 1.20's TestPostFilter and TestPreempt, plus what the API calls do: victims
// deleted (and a failed deletion), lower-priority nominations cleared, the random start.
#include <catch2/catch.hpp>

#include <set>

#include "fixture.h"
#include "plugins/upstream/defaultpreemption/eligibility.h"

namespace koord::roles::scheduler::upstream::dptest {
namespace {

struct PostFilterCase {
  std::string name;
  PodSpec pod;
  std::vector<PodSpec> pods;
  std::vector<std::string> nodes;
  NodeStatusMap statuses;
  std::string nominated;  // expected result; empty: Unschedulable
  std::string message;    // the Unschedulable status' message
};

TEST_CASE("postFilter: kube-scheduler 1.20's TestPostFilter") {
  const Resource no_requests;
  const std::vector<PostFilterCase> table = {
      {"pod with higher priority can be made schedulable",
       {.name = "p", .priority = kHighPriority},
       {{.name = "p1", .node = "node1"}},
       {"node1"},
       {{"node1", Status::unschedulable("Too many pods")}},
       "node1",
       ""},
      {"pod with tied priority is still unschedulable",
       {.name = "p"},
       {{.name = "p1", .node = "node1"}},
       {"node1"},
       {{"node1", Status::unschedulable("Too many pods")}},
       "",
       "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."},
      {"preemption should respect filteredNodesStatuses",
       {.name = "p", .priority = kHighPriority},
       {{.name = "p1", .node = "node1"}},
       {"node1"},
       {{"node1", Status::unresolvable("node(s) didn't match node selector")}},
       "",
       "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."},
      {"pod can be made schedulable on one node",
       {.name = "p", .priority = kMidPriority},
       {{.name = "p1", .priority = kHighPriority, .node = "node1"},
        {.name = "p2", .priority = kLowPriority, .node = "node2"}},
       {"node1", "node2"},
       {{"node1", Status::unschedulable("Too many pods")},
        {"node2", Status::unschedulable("Too many pods")}},
       "node2",
       ""},
  };
  for (const auto& tc : table) {
    SECTION(tc.name) {
      Harness h;
      h.use(makeSnapshot(tc.nodes, tc.pods, no_requests, /*max_pods=*/1));
      auto pl = h.plugin();
      const PodInfo p = makePod(tc.pod);
      CycleState state = h.preFiltered(p);
      PostFilterResult result;
      const Status s = pl->postFilter(state, p, tc.statuses, result);
      CHECK(result.nominated_node_name == tc.nominated);
      if (tc.nominated.empty()) {
        CHECK(s.code() == Code::kUnschedulable);
        CHECK(s.message() == tc.message);
      } else {
        INFO(s.message());
        CHECK(s.ok());
      }
    }
  }
}

struct PreemptCase {
  std::string name;
  PodSpec pod;
  std::vector<PodSpec> pods;
  std::string node;
  std::set<std::string> victims;
};

TEST_CASE("postFilter: kube-scheduler 1.20's TestPreempt and then no second preemption") {
  const std::vector<PodSpec> pods = {
      {.name = "p1.1", .priority = kLowPriority, .req = kSmall, .node = "node1"},
      {.name = "p1.2", .priority = kLowPriority, .req = kSmall, .node = "node1"},
      {.name = "p2.1", .priority = kHighPriority, .req = kLarge, .node = "node2"},
      {.name = "p3.1", .priority = kMidPriority, .req = kMedium, .node = "node3"}};
  const std::vector<PreemptCase> table = {
      {"basic preemption logic",
       {.name = "p", .priority = kHighPriority, .req = kVeryLarge},
       pods,
       "node1",
       {"p1.1", "p1.2"}},
      {"no preempting in pod",
       {.name = "p", .priority = kHighPriority, .req = kVeryLarge, .preempt_never = true},
       pods,
       "",
       {}},
      {"the node whose victims' shifted priorities sum lowest wins",
       {.name = "p", .priority = kHighPriority, .req = kVeryLarge},
       {{.name = "p1.1", .priority = kMidPriority, .req = kSmall, .node = "node1"},
        {.name = "p1.2", .priority = kLowPriority, .req = kSmall, .node = "node1"},
        {.name = "p2.1", .priority = kMidPriority, .req = kLarge, .node = "node2"}},
       "node2",
       {"p2.1"}},
  };
  for (const auto& tc : table) {
    SECTION(tc.name) {
      Harness h;
      h.use(makeSnapshot({"node1", "node2", "node3"}, tc.pods));
      auto pl = h.plugin();
      PodInfo p = makePod(tc.pod);
      CycleState state = h.preFiltered(p);
      PostFilterResult result;
      const Status s = pl->postFilter(state, p, {}, result);
      CHECK(result.nominated_node_name == tc.node);
      CHECK(s.ok() == !tc.node.empty());
      CHECK(std::set<std::string>(h.cluster.deleted.begin(), h.cluster.deleted.end()) ==
            tc.victims);
      if (tc.node.empty())
        continue;

      // The victims are terminating now and the pod is nominated: it waits for them.
      std::vector<PodSpec> after = tc.pods;
      for (auto& spec : after)
        spec.terminating = tc.victims.count(spec.name) != 0;
      h.use(makeSnapshot({"node1", "node2", "node3"}, after));
      p.nominated_node_name = result.nominated_node_name;
      h.cluster.deleted.clear();
      PostFilterResult again;
      const Status s2 = pl->postFilter(state, p, {}, again);
      CHECK(s2.code() == Code::kUnschedulable);
      CHECK(s2.message() == kNotEligibleTerminating);
      CHECK(again.nominated_node_name.empty());
      CHECK(h.cluster.deleted.empty());
    }
  }
}

TEST_CASE("postFilter: a failed deletion ends preemption with an Error naming the pod") {
  Harness h;
  h.cluster.fail_delete = {"p1.2"};
  h.use(makeSnapshot(
      {"node1"}, {{.name = "p1.1", .priority = kLowPriority, .req = kMedium, .node = "node1"},
                  {.name = "p1.2", .priority = kLowPriority, .req = kMedium, .node = "node1"},
                  {.name = "p1.3", .priority = kLowPriority, .req = kMedium, .node = "node1"}}));
  auto pl = h.plugin();
  const PodInfo p = makePod({.name = "p", .priority = kHighPriority, .req = kVeryLarge});
  CycleState state = h.preFiltered(p);
  PostFilterResult result;
  const Status s = pl->postFilter(state, p, {}, result);
  CHECK(s.code() == Code::kError);
  CHECK_THAT(s.message(), Catch::Matchers::Contains("default/p1.2") &&
                              Catch::Matchers::Contains("is forbidden"));
  CHECK(result.nominated_node_name.empty());
  // Deleted in order until the failure; nothing after it, no nomination cleared.
  CHECK(h.cluster.deleted == std::vector<std::string>{"p1.1", "p1.2"});
  CHECK(h.cluster.cleared.empty());
}

TEST_CASE("postFilter: lower-priority pods nominated to the chosen node lose their nomination") {
  for (const bool fail_clear : {false, true}) {
    SECTION(fail_clear ? "clearing fails: only logged" : "clearing succeeds") {
      Harness h;
      h.cluster.fail_clear = fail_clear;
      h.cluster.nominated["node1"] = {
          pod({.name = "low", .priority = kLowPriority, .nominated = "node1"}),
          pod({.name = "low-in-memory-only", .priority = kLowPriority}),
          pod({.name = "equal", .priority = kHighPriority, .nominated = "node1"}),
          pod({.name = "higher", .priority = kVeryHighPriority, .nominated = "node1"})};
      h.cluster.nominated["node2"] = {
          pod({.name = "elsewhere", .priority = kLowPriority, .nominated = "node2"})};
      h.use(makeSnapshot(
          {"node1"}, {{.name = "p1", .priority = kLowPriority, .req = kLarge, .node = "node1"}}));
      auto pl = h.plugin();
      const PodInfo p = makePod({.name = "p", .priority = kHighPriority, .req = kLarge});
      CycleState state = h.preFiltered(p);
      PostFilterResult result;
      const Status s = pl->postFilter(state, p, {}, result);
      INFO(s.message());
      CHECK(s.ok());
      CHECK(result.nominated_node_name == "node1");
      CHECK(h.cluster.deleted == std::vector<std::string>{"p1"});
      CHECK(h.cluster.cleared == std::vector<std::string>{"low"});
    }
  }
}

TEST_CASE("postFilter: nominated pods of equal or higher priority count during the simulation") {
  // A pod nominated to node1 with equal priority holds 300 of its 500: evicting p1 no longer
  // makes room there, so node2 is chosen.
  Harness h;
  h.cluster.nominated["node1"] = {
      pod({.name = "n", .priority = kHighPriority, .req = kLarge, .nominated = "node1"})};
  h.use(makeSnapshot({"node1", "node2"},
                     {{.name = "p1", .priority = kLowPriority, .req = kLarge, .node = "node1"},
                      {.name = "p2", .priority = kMidPriority, .req = kLarge, .node = "node2"}}));
  auto pl = h.plugin();
  const PodInfo p = makePod({.name = "p", .priority = kHighPriority, .req = kLarge});
  CycleState state = h.preFiltered(p);
  PostFilterResult result;
  REQUIRE(pl->postFilter(state, p, {}, result).ok());
  CHECK(result.nominated_node_name == "node2");
  CHECK(h.cluster.deleted == std::vector<std::string>{"p2"});
}

TEST_CASE("postFilter: no node where preemption helps clears the pod's own nomination") {
  Harness h;
  h.use(makeSnapshot({"node1", "node2"},
                     {{.name = "p1", .priority = kLowPriority, .req = kLarge, .node = "node1"}}));
  auto pl = h.plugin();
  const PodInfo p =
      makePod({.name = "p", .priority = kHighPriority, .req = kLarge, .nominated = "node1"});
  CycleState state = h.preFiltered(p);
  PostFilterResult result;
  const NodeStatusMap statuses = {
      {"node1", Status::unresolvable("node(s) didn't match node selector")},
      {"node2", Status::unresolvable("node(s) didn't match node selector")}};
  const Status s = pl->postFilter(state, p, statuses, result);
  CHECK(s.code() == Code::kUnschedulable);
  CHECK(s.message() ==
        "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.");
  CHECK(h.cluster.cleared == std::vector<std::string>{"p"});
  CHECK(h.cluster.deleted.empty());
}

TEST_CASE("postFilter: the summary counts unhelpful nodes and simulation failures together") {
  Harness h;
  h.use(makeSnapshot({"node1", "node2", "node3"},
                     {{.name = "p2", .priority = kHighPriority, .req = kLarge, .node = "node2"},
                      {.name = "p3", .priority = kLowPriority, .req = kSmall, .node = "node3"},
                      {.name = "p3b", .priority = kHighPriority, .req = kLarge, .node = "node3"}}));
  auto pl = h.plugin();
  const PodInfo p = makePod({.name = "p", .priority = kHighPriority, .req = kLarge});
  CycleState state = h.preFiltered(p);
  PostFilterResult result;
  const Status s =
      pl->postFilter(state, p, {{"node1", Status::unresolvable("node(s) had taint")}}, result);
  CHECK(s.code() == Code::kUnschedulable);
  CHECK(s.message() ==
        "preemption: 0/3 nodes are available: 1 Insufficient cpu, 1 Insufficient memory, "
        "1 No preemption victims found for incoming pod, 1 Preemption is not helpful for "
        "scheduling.");
}

TEST_CASE("postFilter: an empty snapshot is an error as upstream's ErrNoNodesAvailable") {
  Harness h;
  h.use(Snapshot{});
  auto pl = h.plugin();
  const PodInfo p = makePod({.name = "p", .priority = kHighPriority});
  CycleState state;
  PostFilterResult result;
  const Status s = pl->postFilter(state, p, {}, result);
  CHECK(s.code() == Code::kError);
  CHECK(s.message() == "no nodes available to schedule pods");
}

// Five identical nodes, one candidate wanted: the nominated node is where the run started.
std::vector<std::string> nominations(std::uint64_t seed, int rounds) {
  Harness h;
  std::vector<PodSpec> pods;
  std::vector<std::string> names;
  for (int i = 1; i <= 5; ++i) {
    names.push_back("node" + std::to_string(i));
    pods.push_back({.name = "v" + std::to_string(i),
                    .priority = kLowPriority,
                    .req = kLarge,
                    .node = names.back()});
  }
  h.use(makeSnapshot(names, pods));
  auto pl = h.plugin(0, 1, seed);
  const PodInfo p = makePod({.name = "p", .priority = kHighPriority, .req = kLarge});
  std::vector<std::string> out;
  for (int i = 0; i < rounds; ++i) {
    CycleState state = h.preFiltered(p);
    PostFilterResult result;
    REQUIRE(pl->postFilter(state, p, {}, result).ok());
    out.push_back(result.nominated_node_name);
  }
  return out;
}

TEST_CASE("postFilter: the dry run starts at a random node reproducible from the seed") {
  const auto a = nominations(7, 40);
  CHECK(a == nominations(7, 40));
  const std::set<std::string> distinct(a.begin(), a.end());
  CHECK(distinct.size() > 1);
  for (const auto& n : distinct)
    CHECK_THAT(n, Catch::Matchers::StartsWith("node"));
}

TEST_CASE("numCandidates follows the args: percentage then absolute floor then node count cap") {
  Harness h;
  CHECK(h.plugin(10, 100)->numCandidates(5000) == 500);
  CHECK(h.plugin(10, 100)->numCandidates(500) == 100);
  CHECK(h.plugin(10, 100)->numCandidates(50) == 50);
  CHECK(h.plugin(40, 1)->numCandidates(5) == 2);
  CHECK(h.plugin(40, 2)->numCandidates(5) == 2);
  CHECK(h.plugin(0, 3)->numCandidates(10) == 3);
  CHECK(h.plugin(100, 0)->numCandidates(7) == 7);
  CHECK(h.plugin(1, 0)->numCandidates(50) == 0);
}

TEST_CASE("DefaultPreemption registered and run by the framework as the PostFilter plugin") {
  Harness h({"NodeResourcesFit"}, /*post_filter=*/true);
  REQUIRE(h.fw->hasPostFilterPlugins());
  h.use(makeSnapshot({"node1"},
                     {{.name = "p1", .priority = kLowPriority, .req = kLarge, .node = "node1"}}));
  const PodInfo p = makePod({.name = "p", .priority = kHighPriority, .req = kLarge});
  CycleState state = h.preFiltered(p);
  PostFilterResult result;
  const Status s = h.fw->runPostFilterPlugins(
      state, p, {{"node1", Status::unschedulable("Insufficient cpu")}}, result);
  INFO(s.message());
  CHECK(s.ok());
  CHECK(result.nominated_node_name == "node1");
  CHECK(h.cluster.deleted == std::vector<std::string>{"p1"});

  const PodInfo never =
      makePod({.name = "q", .priority = kHighPriority, .req = kLarge, .preempt_never = true});
  CycleState state2 = h.preFiltered(never);
  PostFilterResult none;
  const Status s2 = h.fw->runPostFilterPlugins(state2, never, {}, none);
  CHECK(s2.code() == Code::kUnschedulable);
  CHECK(s2.plugin() == "DefaultPreemption");
}

}  // namespace
}  // namespace koord::roles::scheduler::upstream::dptest
