// kube-scheduler 1.20's TestSelectBestCandidate (dry run then pick, from every start offset)
// and each tie-break of pickOneNodeForPreemption on hand-made candidates.
#include <catch2/catch.hpp>

#include <limits>

#include "fixture.h"
#include "plugins/upstream/defaultpreemption/pick_node.h"

namespace koord::roles::scheduler::upstream::dptest {
namespace {

struct PickCase {
  std::string name;
  std::vector<std::string> nodes;
  PodSpec preemptor;
  std::vector<PodSpec> pods;
  std::vector<std::string> expected;  // any of them
};

std::vector<PickCase> cases() {
  const std::vector<std::string> three = {"node1", "node2", "node3"};
  return {
      {"No node needs preemption",
       {"node1"},
       {.name = "p", .priority = kHighPriority, .req = kLarge},
       {{.name = "p1", .priority = kMidPriority, .req = kSmall, .node = "node1", .start = 0}},
       {"node1"}},
      {"a pod that fits on both nodes when lower priority pods are preempted",
       {"node1", "node2"},
       {.name = "p", .priority = kHighPriority, .req = kLarge},
       {{.name = "p1", .priority = kMidPriority, .req = kLarge, .node = "node1", .start = 0},
        {.name = "p2", .priority = kMidPriority, .req = kLarge, .node = "node2", .start = 0}},
       {"node1", "node2"}},
      {"node with min highest priority pod is picked",
       three,
       {.name = "p", .priority = kHighPriority, .req = kVeryLarge},
       {{.name = "p1.1", .priority = kMidPriority, .req = kMedium, .node = "node1", .start = 0},
        {.name = "p1.2", .priority = kMidPriority, .req = kLarge, .node = "node1", .start = 0},
        {.name = "p2.1", .priority = kMidPriority, .req = kMedium, .node = "node2", .start = 0},
        {.name = "p2.2", .priority = kLowPriority, .req = kMedium, .node = "node2", .start = 0},
        {.name = "p3.1", .priority = kLowPriority, .req = kMedium, .node = "node3", .start = 0},
        {.name = "p3.2", .priority = kLowPriority, .req = kMedium, .node = "node3", .start = 0}},
       {"node3"}},
      {"when highest priorities are the same minimum sum of priorities is picked",
       three,
       {.name = "p", .priority = kHighPriority, .req = kVeryLarge},
       {{.name = "p1.1", .priority = kMidPriority, .req = kMedium, .node = "node1", .start = 0},
        {.name = "p1.2", .priority = kMidPriority, .req = kLarge, .node = "node1", .start = 0},
        {.name = "p2.1", .priority = kMidPriority, .req = kLarge, .node = "node2", .start = 0},
        {.name = "p2.2", .priority = kLowPriority, .req = kMedium, .node = "node2", .start = 0},
        {.name = "p3.1", .priority = kMidPriority, .req = kMedium, .node = "node3", .start = 0},
        {.name = "p3.2", .priority = kMidPriority, .req = kMedium, .node = "node3", .start = 0}},
       {"node2"}},
      {"when highest priority and sum are the same minimum number of pods is picked",
       three,
       {.name = "p", .priority = kHighPriority, .req = kVeryLarge},
       {{.name = "p1.1", .priority = kMidPriority, .req = kSmall, .node = "node1", .start = 0},
        {.name = "p1.2", .priority = kNegPriority, .req = kSmall, .node = "node1", .start = 0},
        {.name = "p1.3", .priority = kMidPriority, .req = kSmall, .node = "node1", .start = 0},
        {.name = "p1.4", .priority = kNegPriority, .req = kSmall, .node = "node1", .start = 0},
        {.name = "p2.1", .priority = kMidPriority, .req = kLarge, .node = "node2", .start = 0},
        {.name = "p2.2", .priority = kNegPriority, .req = kMedium, .node = "node2", .start = 0},
        {.name = "p3.1", .priority = kMidPriority, .req = kMedium, .node = "node3", .start = 0},
        {.name = "p3.2", .priority = kNegPriority, .req = kSmall, .node = "node3", .start = 0},
        {.name = "p3.3", .priority = kLowPriority, .req = kSmall, .node = "node3", .start = 0}},
       {"node2"}},
      {"sum of adjusted priorities is considered",
       three,
       {.name = "p", .priority = kHighPriority, .req = kVeryLarge},
       {{.name = "p1.1", .priority = kMidPriority, .req = kSmall, .node = "node1", .start = 0},
        {.name = "p1.2", .priority = kNegPriority, .req = kSmall, .node = "node1", .start = 0},
        {.name = "p1.3", .priority = kNegPriority, .req = kSmall, .node = "node1", .start = 0},
        {.name = "p2.1", .priority = kMidPriority, .req = kLarge, .node = "node2", .start = 0},
        {.name = "p2.2", .priority = kNegPriority, .req = kMedium, .node = "node2", .start = 0},
        {.name = "p3.1", .priority = kMidPriority, .req = kMedium, .node = "node3", .start = 0},
        {.name = "p3.2", .priority = kNegPriority, .req = kSmall, .node = "node3", .start = 0},
        {.name = "p3.3", .priority = kLowPriority, .req = kSmall, .node = "node3", .start = 0}},
       {"node2"}},
      {"non-overlapping lowest high priority sum priorities and number of pods",
       {"node1", "node2", "node3", "node4"},
       {.name = "p", .priority = kVeryHighPriority, .req = kVeryLarge},
       {{.name = "p1.1", .priority = kMidPriority, .req = kSmall, .node = "node1", .start = 0},
        {.name = "p1.2", .priority = kLowPriority, .req = kSmall, .node = "node1", .start = 0},
        {.name = "p1.3", .priority = kLowPriority, .req = kSmall, .node = "node1", .start = 0},
        {.name = "p2.1", .priority = kHighPriority, .req = kLarge, .node = "node2", .start = 0},
        {.name = "p3.1", .priority = kMidPriority, .req = kMedium, .node = "node3", .start = 0},
        {.name = "p3.2", .priority = kLowPriority, .req = kSmall, .node = "node3", .start = 0},
        {.name = "p3.3", .priority = kLowPriority, .req = kSmall, .node = "node3", .start = 0},
        {.name = "p3.4", .priority = kLowPriority, .req = kMedium, .node = "node3", .start = 0},
        {.name = "p4.1", .priority = kMidPriority, .req = kMedium, .node = "node4", .start = 0},
        {.name = "p4.2", .priority = kMidPriority, .req = kSmall, .node = "node4", .start = 0},
        {.name = "p4.3", .priority = kMidPriority, .req = kSmall, .node = "node4", .start = 0},
        {.name = "p4.4", .priority = kNegPriority, .req = kSmall, .node = "node4", .start = 0}},
       {"node1"}},
      {"same priority and number of victims: different start time for each node's pods",
       three,
       {.name = "p", .priority = kHighPriority, .req = kVeryLarge},
       {{.name = "p1.1", .priority = kMidPriority, .req = kMedium, .node = "node1", .start = 2},
        {.name = "p1.2", .priority = kMidPriority, .req = kMedium, .node = "node1", .start = 2},
        {.name = "p2.1", .priority = kMidPriority, .req = kMedium, .node = "node2", .start = 3},
        {.name = "p2.2", .priority = kMidPriority, .req = kMedium, .node = "node2", .start = 3},
        {.name = "p3.1", .priority = kMidPriority, .req = kMedium, .node = "node3", .start = 1},
        {.name = "p3.2", .priority = kMidPriority, .req = kMedium, .node = "node3", .start = 1}},
       {"node2"}},
      {"same priority and number of victims: different start time for all pods",
       three,
       {.name = "p", .priority = kHighPriority, .req = kVeryLarge},
       {{.name = "p1.1", .priority = kMidPriority, .req = kMedium, .node = "node1", .start = 4},
        {.name = "p1.2", .priority = kMidPriority, .req = kMedium, .node = "node1", .start = 2},
        {.name = "p2.1", .priority = kMidPriority, .req = kMedium, .node = "node2", .start = 5},
        {.name = "p2.2", .priority = kMidPriority, .req = kMedium, .node = "node2", .start = 1},
        {.name = "p3.1", .priority = kMidPriority, .req = kMedium, .node = "node3", .start = 3},
        {.name = "p3.2", .priority = kMidPriority, .req = kMedium, .node = "node3", .start = 6}},
       {"node3"}},
      {"different priority and same number of victims: different start time for all pods",
       three,
       {.name = "p", .priority = kHighPriority, .req = kVeryLarge},
       {{.name = "p1.1", .priority = kLowPriority, .req = kMedium, .node = "node1", .start = 4},
        {.name = "p1.2", .priority = kMidPriority, .req = kMedium, .node = "node1", .start = 2},
        {.name = "p2.1", .priority = kMidPriority, .req = kMedium, .node = "node2", .start = 6},
        {.name = "p2.2", .priority = kLowPriority, .req = kMedium, .node = "node2", .start = 1},
        {.name = "p3.1", .priority = kLowPriority, .req = kMedium, .node = "node3", .start = 3},
        {.name = "p3.2", .priority = kMidPriority, .req = kMedium, .node = "node3", .start = 5}},
       {"node2"}},
  };
}

TEST_CASE("select best candidate: the node kube-scheduler 1.20 picks from every start offset") {
  for (const auto& tc : cases()) {
    SECTION(tc.name) {
      Harness h;
      h.use(makeSnapshot(tc.nodes, tc.pods));
      auto pl = h.plugin();
      const PodInfo p = makePod(tc.preemptor);
      const auto nodes = h.allNodes();
      for (std::size_t offset = 0; offset < nodes.size(); ++offset) {
        INFO("offset " << offset);
        CycleState state = h.preFiltered(p);
        const auto now = std::chrono::system_clock::now();
        const auto run =
            pl->dryRunPreemption(state, p, nodes, offset, pl->numCandidates(nodes.size()), now);
        REQUIRE_FALSE(run.candidates.empty());
        const auto& picked = run.candidates[pickOneNodeForPreemption(run.candidates, now)].node;
        CHECK_THAT(tc.expected, Catch::Matchers::VectorContains(picked));
      }
    }
  }
}

// Victims named "<priority>@<start>" (start in epoch nanoseconds; -1: not started).
Candidate candidate(std::string node, std::vector<std::pair<std::int32_t, int>> victims,
                    std::int64_t pdb = 0) {
  Candidate c;
  c.node = std::move(node);
  c.num_pdb_violations = pdb;
  int i = 0;
  for (const auto& [priority, start] : victims) {
    PodSpec s{.name = c.node + "-v" + std::to_string(i++), .priority = priority};
    if (start >= 0)
      s.start = start;
    c.victims.push_back(pod(s));
  }
  return c;
}

struct TieCase {
  std::string name;
  std::vector<Candidate> candidates;
  std::string expected;
};

TEST_CASE("pickOneNodeForPreemption applies each tie-break in upstream's order") {
  const std::vector<TieCase> table = {
      {"a node without victims wins at once",
       {candidate("a", {{0, 1}}), candidate("b", {}), candidate("c", {})},
       "b"},
      {"fewest PDB violations first",
       {candidate("a", {{-100, 1}}, 2), candidate("b", {{500, 1}, {500, 1}}, 1)},
       "b"},
      {"then the lowest highest victim priority",
       {candidate("a", {{100, 1}, {0, 1}}), candidate("b", {{50, 1}, {50, 1}, {50, 1}})},
       "b"},
      {"then the smallest sum of shifted priorities: fewer negative victims win",
       {candidate("a", {{100, 1}, {-100, 1}, {-100, 1}}), candidate("b", {{100, 1}, {-100, 1}})},
       "b"},
      {"then the smallest sum of priorities",
       {candidate("a", {{100, 1}, {50, 1}}), candidate("b", {{100, 1}, {40, 1}})},
       "b"},
      // With the 2^31 shift a victim at INT32_MIN adds nothing to the sum, so only the count
      // tells these apart.
      {"then the fewest victims (equal highest and equal sums)",
       {candidate("a", {{0, 1}, {std::numeric_limits<std::int32_t>::min(), 1}}),
        candidate("b", {{0, 1}})},
       "b"},
      {"then the latest earliest start among the highest-priority victims",
       {candidate("a", {{100, 5}, {100, 2}}), candidate("b", {{100, 3}, {100, 4}}),
        candidate("c", {{100, 1}, {100, 9}})},
       "b"},
      {"lower-priority victims' start times do not count",
       {candidate("a", {{100, 3}, {0, 9}}), candidate("b", {{100, 4}, {0, 1}})},
       "b"},
      {"a victim not started yet counts as starting now",
       {candidate("a", {{100, 7}}), candidate("b", {{100, -1}})},
       "b"},
      {"a full tie keeps the first candidate",
       {candidate("a", {{100, 3}}), candidate("b", {{100, 3}}), candidate("c", {{100, 3}})},
       "a"},
      {"a single candidate is picked whatever it costs",
       {candidate("only", {{900, 1}, {900, 1}}, 2)},
       "only"},
  };
  const auto now = std::chrono::system_clock::now();
  for (const auto& tc : table) {
    SECTION(tc.name) {
      CHECK(tc.candidates[pickOneNodeForPreemption(tc.candidates, now)].node == tc.expected);
    }
  }
}

}  // namespace
}  // namespace koord::roles::scheduler::upstream::dptest
