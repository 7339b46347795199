// kube-scheduler 1.20's TestDryRunPreemption: which nodes become candidates, with which victims,
// and how many filter calls the simulation costs (FakeFilter runs first on every check).
#include <catch2/catch.hpp>

#include "fixture.h"

namespace koord::roles::scheduler::upstream::dptest {
namespace {

using Kind = std::vector<std::string>;

struct DryRunCase {
  std::string name{};
  std::vector<std::string> filters{};
  std::vector<std::string> nodes{};
  std::vector<PodSpec> preemptors{};  // one cycle each
  std::vector<PodSpec> pods{};
  std::vector<DisruptionBudget> pdbs{};
  Code fake_code = Code::kSuccess;
  std::int32_t percentage = 10;
  std::int32_t absolute = 100;
  std::vector<std::size_t> offsets{};  // per cycle; upstream's rand.Seed(4) draws
  std::vector<std::vector<std::string>> expected{};
  std::vector<int> filter_calls{};
};

const Kind kFit = {"NodeResourcesFit"};
const std::vector<std::string> kTwoNodes = {"node1", "node2"};
const std::vector<std::string> kFiveNodes = {"node1", "node2", "node3", "node4", "node5"};

std::vector<DryRunCase> cases() {
  const kube::Labels foo = {{"app", "foo"}};
  return {
      {.name = "a pod that does not fit on any node",
       .filters = {"FalseFilter"},
       .nodes = kTwoNodes,
       .preemptors = {{.name = "p", .priority = kHighPriority}},
       .pods = {{.name = "p1", .priority = kMidPriority, .node = "node1"},
                {.name = "p2", .priority = kMidPriority, .node = "node2"}},
       .offsets = {0},
       .expected = {{}},
       .filter_calls = {2}},
      {.name = "a pod that fits with no preemption",
       .filters = {"TrueFilter"},
       .nodes = kTwoNodes,
       .preemptors = {{.name = "p", .priority = kHighPriority}},
       .pods = {{.name = "p1", .priority = kMidPriority, .node = "node1"},
                {.name = "p2", .priority = kMidPriority, .node = "node2"}},
       .offsets = {0},
       .expected = {{"node1:", "node2:"}},
       .filter_calls = {4}},
      {.name = "a pod that fits on one node with no preemption",
       .filters = {"MatchFilter"},
       .nodes = kTwoNodes,
       .preemptors = {{.name = "node1", .priority = kHighPriority}},
       .pods = {{.name = "p1", .priority = kMidPriority, .node = "node1"},
                {.name = "p2", .priority = kMidPriority, .node = "node2"}},
       .offsets = {0},
       .expected = {{"node1:"}},
       .filter_calls = {3}},
      {.name = "a pod that fits on both nodes when lower priority pods are preempted",
       .filters = kFit,
       .nodes = kTwoNodes,
       .preemptors = {{.name = "p", .priority = kHighPriority, .req = kLarge}},
       .pods = {{.name = "p1", .priority = kMidPriority, .req = kLarge, .node = "node1"},
                {.name = "p2", .priority = kMidPriority, .req = kLarge, .node = "node2"}},
       .offsets = {0},
       .expected = {{"node1: p1", "node2: p2"}},
       .filter_calls = {4}},
      {.name = "other pods running are higher priority: no preemption would happen",
       .filters = kFit,
       .nodes = kTwoNodes,
       .preemptors = {{.name = "p", .priority = kLowPriority, .req = kLarge}},
       .pods = {{.name = "p1", .priority = kMidPriority, .req = kLarge, .node = "node1"},
                {.name = "p2", .priority = kMidPriority, .req = kLarge, .node = "node2"}},
       .offsets = {0},
       .expected = {{}},
       .filter_calls = {0}},
      {.name = "medium priority pod is preempted but lower priority one stays as it is small",
       .filters = kFit,
       .nodes = kTwoNodes,
       .preemptors = {{.name = "p", .priority = kHighPriority, .req = kLarge}},
       .pods = {{.name = "p1.1", .priority = kLowPriority, .req = kSmall, .node = "node1"},
                {.name = "p1.2", .priority = kMidPriority, .req = kLarge, .node = "node1"},
                {.name = "p2", .priority = kMidPriority, .req = kLarge, .node = "node2"}},
       .offsets = {0},
       .expected = {{"node1: p1.2", "node2: p2"}},
       .filter_calls = {5}},
      {.name = "mixed priority pods are preempted",
       .filters = kFit,
       .nodes = kTwoNodes,
       .preemptors = {{.name = "p", .priority = kHighPriority, .req = kLarge}},
       .pods = {{.name = "p1.1", .priority = kMidPriority, .req = kSmall, .node = "node1"},
                {.name = "p1.2", .priority = kLowPriority, .req = kSmall, .node = "node1"},
                {.name = "p1.3", .priority = kMidPriority, .req = kMedium, .node = "node1"},
                {.name = "p1.4", .priority = kHighPriority, .req = kSmall, .node = "node1"},
                {.name = "p2", .priority = kHighPriority, .req = kLarge, .node = "node2"}},
       .offsets = {0},
       .expected = {{"node1: p1.2,p1.3"}},
       .filter_calls = {4}},
      {.name = "mixed priority pods are preempted: the later start goes when priorities are equal",
       .filters = kFit,
       .nodes = kTwoNodes,
       .preemptors = {{.name = "p", .priority = kHighPriority, .req = kLarge}},
       .pods =
           {{.name = "p1.1", .priority = kLowPriority, .req = kSmall, .node = "node1", .start = 5},
            {.name = "p1.2", .priority = kLowPriority, .req = kSmall, .node = "node1", .start = 4},
            {.name = "p1.3", .priority = kMidPriority, .req = kMedium, .node = "node1", .start = 3},
            {.name = "p1.4", .priority = kHighPriority, .req = kSmall, .node = "node1", .start = 2},
            {.name = "p2", .priority = kHighPriority, .req = kLarge, .node = "node2", .start = 1}},
       .offsets = {0},
       .expected = {{"node1: p1.1,p1.3"}},
       .filter_calls = {4}},
      {.name = "Unschedulable from the filters during the simulation: no candidate",
       .filters = kFit,
       .nodes = kTwoNodes,
       .preemptors = {{.name = "p", .priority = kHighPriority, .req = kLarge}},
       .pods = {{.name = "p1", .priority = kMidPriority, .req = kLarge, .node = "node1"},
                {.name = "p2", .priority = kMidPriority, .req = kLarge, .node = "node2"}},
       .fake_code = Code::kUnschedulable,
       .offsets = {0},
       .expected = {{}},
       .filter_calls = {2}},
      {.name = "preemption with violation of same pdb",
       .filters = kFit,
       .nodes = {"node1"},
       .preemptors = {{.name = "p", .priority = kHighPriority, .req = kVeryLarge}},
       .pods = {{.name = "p1.1",
                 .priority = kMidPriority,
                 .req = kMedium,
                 .node = "node1",
                 .labels = foo},
                {.name = "p1.2",
                 .priority = kMidPriority,
                 .req = kMedium,
                 .node = "node1",
                 .labels = foo}},
       .pdbs = {budget(foo, 1)},
       .offsets = {0},
       .expected = {{"node1: p1.1,p1.2 (pdb 1)"}},
       .filter_calls = {3}},
      {.name = "pdb with an eviction processed for a pod that is no victim",
       .filters = kFit,
       .nodes = {"node1"},
       .preemptors = {{.name = "p", .priority = kHighPriority, .req = kVeryLarge}},
       .pods = {{.name = "p1.1",
                 .priority = kMidPriority,
                 .req = kMedium,
                 .node = "node1",
                 .labels = foo},
                {.name = "p1.2",
                 .priority = kMidPriority,
                 .req = kMedium,
                 .node = "node1",
                 .labels = foo}},
       .pdbs = {budget(foo, 1, {"p2"})},
       .offsets = {0},
       .expected = {{"node1: p1.1,p1.2 (pdb 1)"}},
       .filter_calls = {3}},
      {.name = "pdb with an eviction processed for a victim: no violation",
       .filters = kFit,
       .nodes = {"node1"},
       .preemptors = {{.name = "p", .priority = kHighPriority, .req = kVeryLarge}},
       .pods = {{.name = "p1.1",
                 .priority = kMidPriority,
                 .req = kMedium,
                 .node = "node1",
                 .labels = foo},
                {.name = "p1.2",
                 .priority = kMidPriority,
                 .req = kMedium,
                 .node = "node1",
                 .labels = foo}},
       .pdbs = {budget(foo, 1, {"p1.2"})},
       .offsets = {0},
       .expected = {{"node1: p1.1,p1.2"}},
       .filter_calls = {3}},
      {.name =
           "pdb with an eviction processed for one of three victims: it counts as non-violating",
       .filters = kFit,
       .nodes = {"node1"},
       .preemptors = {{.name = "p", .priority = kHighPriority, .req = kVeryLarge}},
       .pods = {{.name = "p1.1",
                 .priority = kMidPriority,
                 .req = kMedium,
                 .node = "node1",
                 .labels = foo},
                {.name = "p1.2",
                 .priority = kMidPriority,
                 .req = kMedium,
                 .node = "node1",
                 .labels = foo},
                {.name = "p1.3",
                 .priority = kMidPriority,
                 .req = kMedium,
                 .node = "node1",
                 .labels = foo}},
       .pdbs = {budget(foo, 1, {"p1.3"})},
       .offsets = {0},
       .expected = {{"node1: p1.1,p1.2,p1.3 (pdb 1)"}},
       .filter_calls = {4}},
      {.name = "all nodes are possible candidates but the args limit them to 2",
       .filters = kFit,
       .nodes = kFiveNodes,
       .preemptors = {{.name = "p", .priority = kHighPriority, .req = kLarge}},
       .pods = {{.name = "p1", .priority = kMidPriority, .req = kLarge, .node = "node1"},
                {.name = "p2", .priority = kMidPriority, .req = kLarge, .node = "node2"},
                {.name = "p3", .priority = kMidPriority, .req = kLarge, .node = "node3"},
                {.name = "p4", .priority = kMidPriority, .req = kLarge, .node = "node4"},
                {.name = "p5", .priority = kMidPriority, .req = kLarge, .node = "node5"}},
       .percentage = 40,
       .absolute = 1,
       .offsets = {4},  // node5 (yes), node1 (yes)
       .expected = {{"node1: p1", "node5: p5"}},
       .filter_calls = {4}},
      {.name = "some nodes are not possible candidates and the args limit them to 2",
       .filters = kFit,
       .nodes = kFiveNodes,
       .preemptors = {{.name = "p", .priority = kHighPriority, .req = kLarge}},
       .pods = {{.name = "p1", .priority = kMidPriority, .req = kLarge, .node = "node1"},
                {.name = "p2", .priority = kVeryHighPriority, .req = kLarge, .node = "node2"},
                {.name = "p3", .priority = kMidPriority, .req = kLarge, .node = "node3"},
                {.name = "p4", .priority = kMidPriority, .req = kLarge, .node = "node4"},
                {.name = "p5", .priority = kVeryHighPriority, .req = kLarge, .node = "node5"}},
       .percentage = 40,
       .absolute = 1,
       .offsets = {4},  // node5 (no), node1 (yes), node2 (no), node3 (yes)
       .expected = {{"node1: p1", "node3: p3"}},
       .filter_calls = {4}},
      {.name = "the offset moves across cycles and wraps around",
       .filters = kFit,
       .nodes = kFiveNodes,
       .preemptors = {{.name = "tp1", .priority = kHighPriority, .req = kLarge},
                      {.name = "tp2", .priority = kHighPriority, .req = kLarge},
                      {.name = "tp3", .priority = kHighPriority, .req = kLarge}},
       .pods = {{.name = "p1", .priority = kMidPriority, .req = kLarge, .node = "node1"},
                {.name = "p2", .priority = kMidPriority, .req = kLarge, .node = "node2"},
                {.name = "p3", .priority = kMidPriority, .req = kLarge, .node = "node3"},
                {.name = "p4", .priority = kMidPriority, .req = kLarge, .node = "node4"},
                {.name = "p5", .priority = kMidPriority, .req = kLarge, .node = "node5"}},
       .percentage = 40,
       .absolute = 1,
       .offsets = {4, 1, 3},
       .expected = {{"node1: p1", "node5: p5"},
                    {"node2: p2", "node3: p3"},
                    {"node4: p4", "node5: p5"}},
       .filter_calls = {4, 4, 4}},
      {.name = "the run looks past numCandidates until a node without PDB violations is found",
       .filters = kFit,
       .nodes = kFiveNodes,
       .preemptors = {{.name = "p", .priority = kHighPriority, .req = kLarge}},
       .pods =
           {{.name = "p1", .priority = kMidPriority, .req = kLarge, .node = "node1", .labels = foo},
            {.name = "p2", .priority = kMidPriority, .req = kLarge, .node = "node2", .labels = foo},
            {.name = "p3", .priority = kMidPriority, .req = kLarge, .node = "node3"},
            {.name = "p4", .priority = kMidPriority, .req = kLarge, .node = "node4"},
            {.name = "p5",
             .priority = kMidPriority,
             .req = kLarge,
             .node = "node5",
             .labels = foo}},
       .pdbs = {budget(foo, 0)},
       .percentage = 40,
       .absolute = 2,
       // node5 (pdb), node1 (pdb), node2 (pdb, both slots taken), node3 (no violation): stop.
       .offsets = {4},
       .expected = {{"node1: p1 (pdb 1)", "node3: p3", "node5: p5 (pdb 1)"}},
       .filter_calls = {8}},
  };
}

TEST_CASE("dry run: candidates and victims as kube-scheduler 1.20 finds them") {
  for (const auto& tc : cases()) {
    SECTION(tc.name) {
      Harness h(tc.filters);
      h.cluster.budgets["default"] = tc.pdbs;
      h.fake->code = tc.fake_code;
      h.use(makeSnapshot(tc.nodes, tc.pods));
      auto pl = h.plugin(tc.percentage, tc.absolute);
      int previous = 0;
      for (std::size_t cycle = 0; cycle < tc.preemptors.size(); ++cycle) {
        INFO("cycle " << cycle);
        const PodInfo p = makePod(tc.preemptors[cycle]);
        CycleState state = h.preFiltered(p);
        const auto nodes = h.allNodes();
        const auto run =
            pl->dryRunPreemption(state, p, nodes, tc.offsets[cycle],
                                 pl->numCandidates(nodes.size()), std::chrono::system_clock::now());
        CHECK(describe(run.candidates) == tc.expected[cycle]);
        CHECK(h.fake->calls.load() - previous == tc.filter_calls[cycle]);
        previous = h.fake->calls.load();
      }
    }
  }
}

TEST_CASE("dry run: candidates without PDB violations come before the others") {
  Harness h;
  const kube::Labels foo = {{"app", "foo"}};
  h.cluster.budgets["default"] = {budget(foo, 0)};
  h.use(makeSnapshot(
      {"node1", "node2"},
      {{.name = "p1", .priority = kMidPriority, .req = kLarge, .node = "node1", .labels = foo},
       {.name = "p2", .priority = kMidPriority, .req = kLarge, .node = "node2"}}));
  auto pl = h.plugin();
  const PodInfo p = makePod({.name = "p", .priority = kHighPriority, .req = kLarge});
  CycleState state = h.preFiltered(p);
  const auto run =
      pl->dryRunPreemption(state, p, h.allNodes(), 0, 2, std::chrono::system_clock::now());
  REQUIRE(run.candidates.size() == 2);
  CHECK(run.candidates[0].node == "node2");
  CHECK(run.candidates[0].num_pdb_violations == 0);
  CHECK(run.candidates[1].node == "node1");
  CHECK(run.candidates[1].num_pdb_violations == 1);
}

TEST_CASE("dry run: a PDB in another namespace or with an empty selector protects nothing") {
  Harness h;
  const kube::Labels foo = {{"app", "foo"}};
  auto other_ns = budget(foo, 0);
  other_ns.namespace_ = "other";
  h.cluster.budgets["other"] = {other_ns};
  h.cluster.budgets["default"] = {budget({}, 0)};
  h.use(makeSnapshot(
      {"node1"},
      {{.name = "p1", .priority = kMidPriority, .req = kLarge, .node = "node1", .labels = foo}}));
  auto pl = h.plugin();
  const PodInfo p = makePod({.name = "p", .priority = kHighPriority, .req = kLarge});
  CycleState state = h.preFiltered(p);
  const auto run =
      pl->dryRunPreemption(state, p, h.allNodes(), 0, 1, std::chrono::system_clock::now());
  CHECK(describe(run.candidates) == std::vector<std::string>{"node1: p1"});
}

TEST_CASE("dry run: the PDB allowance is counted down per node and not across nodes") {
  // Each node's victims are judged on their own: one allowed disruption covers one victim on
  // every node (upstream recounts per node too).
  Harness h;
  const kube::Labels foo = {{"app", "foo"}};
  h.cluster.budgets["default"] = {budget(foo, 1)};
  h.use(makeSnapshot(
      {"node1", "node2"},
      {{.name = "p1", .priority = kMidPriority, .req = kLarge, .node = "node1", .labels = foo},
       {.name = "p2", .priority = kMidPriority, .req = kLarge, .node = "node2", .labels = foo}}));
  auto pl = h.plugin();
  const PodInfo p = makePod({.name = "p", .priority = kHighPriority, .req = kLarge});
  CycleState state = h.preFiltered(p);
  const auto run =
      pl->dryRunPreemption(state, p, h.allNodes(), 0, 2, std::chrono::system_clock::now());
  CHECK(describe(run.candidates) == std::vector<std::string>{"node1: p1", "node2: p2"});
}

TEST_CASE("dry run: why nodes are no candidates is counted by reason") {
  Harness h;
  h.use(makeSnapshot({"node1", "node2", "node3"},
                     {{.name = "p1", .priority = kHighPriority, .req = kLarge, .node = "node1"},
                      {.name = "p2", .priority = kMidPriority, .req = kSmall, .node = "node2"},
                      {.name = "p3", .priority = kHighPriority, .req = kLarge, .node = "node2"}}));
  auto pl = h.plugin();
  const PodInfo p = makePod({.name = "p", .priority = kHighPriority, .req = kLarge});
  CycleState state = h.preFiltered(p);
  const auto run =
      pl->dryRunPreemption(state, p, h.allNodes(), 0, 3, std::chrono::system_clock::now());
  // node1 and node3 hold nothing of lower priority; on node2 the pod does not fit even without p2.
  CHECK(run.candidates.empty());
  CHECK(run.visited == 3);
  const std::map<std::string, std::size_t, std::less<>> want = {
      {"Insufficient cpu", 1}, {"Insufficient memory", 1}, {std::string(kNoVictimsReason), 2}};
  CHECK(run.reasons == want);
}

}  // namespace
}  // namespace koord::roles::scheduler::upstream::dptest
