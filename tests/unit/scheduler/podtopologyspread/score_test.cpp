// kube-scheduler 1.20's TestPreScoreStateEmptyNodes (default constraints selecting by the pod's
// ReplicaSet) and TestPodTopologySpreadScore, plus the fast path and the missing-state error.
#include <catch2/catch.hpp>

#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "fixtures.h"
#include "plugins/upstream/podtopologyspread/scoring.h"

namespace pts_test {
namespace {

using koord::kube::NodeSelectorOperator;
using koord::roles::scheduler::upstream::DefaultSpreadConstraint;
using koord::roles::scheduler::upstream::podtopologyspread::kPreScoreStateKey;
using koord::roles::scheduler::upstream::podtopologyspread::PreScoreState;
using koord::roles::scheduler::upstream::podtopologyspread::topologyNormalizingWeight;

using Nodes = std::vector<std::shared_ptr<const Node>>;
const std::string kZone("topology.kubernetes.io/zone");

PodInfo fooPod(std::string name, std::string node) {
  return makePod(std::move(name)).node(std::move(node)).label("foo", "");
}

/// A node with its hostname label, and a "zone" label when `zone` is not empty.
std::shared_ptr<const Node> hostNode(std::string name, std::string zone = std::string()) {
  koord::kube::Labels labels{{std::string(kHostname), name}};
  if (!zone.empty())
    labels["zone"] = std::move(zone);
  return makeNode(std::move(name), std::move(labels));
}

const PreScoreState& preScoreState(const CycleState& state) {
  const auto* s = state.read<PreScoreState>(kPreScoreStateKey);
  REQUIRE(s != nullptr);
  return *s;
}

struct WantScoreConstraint {
  std::int32_t max_skew = 1;
  std::string topology_key;
  koord::kube::Selector selector;              // for a default one, the pod's DefaultSelector
  std::map<std::string, std::int64_t> counts;  // by node name for hostname constraints
  std::size_t domains = 0;                     // the weight is log(domains + 2)
};

struct PreScoreCase {
  std::string name;
  PodInfo pod;
  Nodes nodes;
  std::shared_ptr<const PodTopologySpreadArgs> args;
  std::vector<WantScoreConstraint> want;  // empty: the empty state
  std::size_t ignored = 0;
  SpreadingObjects objects = {};
};

std::vector<PreScoreCase> preScoreCases() {
  const Nodes abx{hostNode("node-a", "zone1"), hostNode("node-b", "zone1"),
                  hostNode("node-x", "zone2")};
  const std::string host(kHostname);
  return {
      {"normal case",
       makePod("p")
           .label("foo", "")
           .spread(1, "zone", kScheduleAnyway, sel("foo"))
           .spread(1, host, kScheduleAnyway, sel("foo")),
       abx,
       listArgs({}),
       {{1, "zone", sel("foo"), {{"zone1", 0}, {"zone2", 0}}, 2},
        {1, host, sel("foo"), {{"node-a", 0}, {"node-b", 0}, {"node-x", 0}}, 3}}},
      {"node-x doesn't have label zone",
       makePod("p")
           .label("foo", "")
           .spread(1, "zone", kScheduleAnyway, sel("foo"))
           .spread(1, host, kScheduleAnyway, sel("bar")),
       {hostNode("node-a", "zone1"), hostNode("node-b", "zone1"), hostNode("node-x")},
       listArgs({}),
       {{1, "zone", sel("foo"), {{"zone1", 0}}, 1},
        {1, host, sel("bar"), {{"node-a", 0}, {"node-b", 0}}, 2}},
       1},
      // Upstream's default-constraint cases: the selector is that of the pod's ReplicaSet.
      {"system defaults constraints and a replica set",
       makePod("p").label("foo", "tar").label("baz", "sup"),
       {makeNode("node-a", {{host, "node-a"}, {kZone, "mars"}})},
       systemArgs(),
       {{3, host, sel("foo"), {{"node-a", 0}}, 1}, {5, kZone, sel("foo"), {{"mars", 0}}, 1}},
       0,
       {.replica_sets = {spreadObject("rs", "foo")}}},
      {"defaults constraints and a replica set",
       makePod("p").label("foo", "tar").label("baz", "sup"),
       {makeNode("node-a", {{"rack", "rack1"}, {host, "node-a"}, {"planet", "mars"}})},
       listArgs({{1, host, kScheduleAnyway},
                 {2, "rack", kDoNotSchedule},
                 {2, "planet", kScheduleAnyway}}),
       {{1, host, sel("foo"), {{"node-a", 0}}, 1}, {2, "planet", sel("foo"), {{"mars", 0}}, 1}},
       0,
       {.replica_sets = {spreadObject("rs", "foo")}}},
      {"defaults constraints and a replica set that doesn't match",
       makePod("p").label("foo", "bar").label("baz", "sup"),
       {makeNode("node-a", {{"planet", "mars"}})},
       listArgs({{2, "planet", kScheduleAnyway}}),
       {},
       0,
       {.replica_sets = {spreadObject("rs", "tar")}}},
      {"defaults constraints and a replica set but pod has constraints",
       makePod("p")
           .label("foo", "bar")
           .label("baz", "sup")
           .spread(1, "zone", kDoNotSchedule, sel("foo=bar"))
           .spread(2, "planet", kScheduleAnyway, sel("baz=sup")),
       {makeNode("node-a", {{"planet", "mars"}, {"galaxy", "andromeda"}})},
       listArgs({{2, "galaxy", kScheduleAnyway}}),
       {{2, "planet", sel("baz=sup"), {{"mars", 0}}, 1}},
       0,
       {.replica_sets = {spreadObject("rs", "foo")}}},
  };
}

void checkPreScoreState(const PreScoreState& got, const PreScoreCase& tc) {
  REQUIRE(got.empty() == tc.want.empty());
  REQUIRE((got.empty() ? tc.want.empty() : got.constraints->size() == tc.want.size()));
  CHECK(got.ignored_nodes == tc.ignored);
  for (std::size_t i = 0; i < tc.want.size(); ++i) {
    INFO("constraint " << i);
    const auto& c = (*got.constraints)[i];
    const auto& want = tc.want[i];
    CHECK(c.max_skew == want.max_skew);
    CHECK(c.topology_key == want.topology_key);
    CHECK(c.selector == want.selector);
    std::map<std::string, std::int64_t> counts;
    got.counts[i].forEach([&](std::string_view v, std::int64_t n) { counts[std::string(v)] = n; });
    CHECK(counts == want.counts);
    CHECK(got.per_node[i] == (want.topology_key == kHostname));
    CHECK(got.weights[i] == Approx(std::log(static_cast<double>(want.domains + 2))));
  }
}

TEST_CASE("PreScore state matches kube-scheduler's table", "[podtopologyspread][score]") {
  for (const auto& tc : preScoreCases()) {
    SECTION(tc.name) {
      FakeHandle handle(tc.nodes, {});
      addSpreadingObjects(handle, tc.objects);
      PodTopologySpread plugin(tc.args, handle);
      CycleState state;
      const Status pre = plugin.preScore(state, tc.pod, handle.nodes());
      if (tc.want.empty()) {
        // No ScheduleAnyway constraints: Skip, the plugin's Score is left out.
        CHECK(pre.isSkip());
        CHECK(state.read<PreScoreState>(kPreScoreStateKey) == nullptr);
        CHECK(tc.ignored == 0);
      } else {
        REQUIRE(pre.ok());
        checkPreScoreState(preScoreState(state), tc);
      }
    }
  }
}

struct ScoreCase {
  std::string name;
  PodInfo pod;
  std::vector<PodInfo> existing;
  Nodes nodes;         // the candidates
  Nodes failed_nodes;  // in the snapshot but not candidates
  std::vector<std::int64_t> want;
};

std::vector<ScoreCase> scoreCases() {
  const std::string host(kHostname);
  const auto hostFoo = [&](std::int32_t skew) {
    return makePod("p").label("foo", "").spread(skew, host, kScheduleAnyway, sel("foo"));
  };
  const auto zoneAndHost = makePod("p")
                               .label("foo", "")
                               .spread(1, "zone", kScheduleAnyway, sel("foo"))
                               .spread(1, host, kScheduleAnyway, sel("foo"));
  const auto fooZoneBarHost = makePod("p")
                                  .label("foo", "")
                                  .label("bar", "")
                                  .spread(1, "zone", kScheduleAnyway, sel("foo"))
                                  .spread(1, host, kScheduleAnyway, sel("bar"));
  const std::vector<PodInfo> spread2103{fooPod("p-a1", "node-a"), fooPod("p-a2", "node-a"),
                                        fooPod("p-b1", "node-b"), fooPod("p-d1", "node-d"),
                                        fooPod("p-d2", "node-d"), fooPod("p-d3", "node-d")};
  const Nodes abcd{hostNode("node-a"), hostNode("node-b"), hostNode("node-c"), hostNode("node-d")};
  const std::vector<PodInfo> spread4213{fooPod("p-a1", "node-a"), fooPod("p-a2", "node-a"),
                                        fooPod("p-a3", "node-a"), fooPod("p-a4", "node-a"),
                                        fooPod("p-b1", "node-b"), fooPod("p-b2", "node-b"),
                                        fooPod("p-x1", "node-x"), fooPod("p-y1", "node-y"),
                                        fooPod("p-y2", "node-y"), fooPod("p-y3", "node-y")};
  const std::vector<PodInfo> differentSelectors{
      fooPod("p-a1", "node-a"), makePod("p-b1").node("node-b").label("foo", "").label("bar", ""),
      fooPod("p-y1", "node-y"), makePod("p-y2").node("node-y").label("bar", "")};
  const Nodes abxyZones{hostNode("node-a", "zone1"), hostNode("node-b", "zone1"),
                        hostNode("node-x", "zone2"), hostNode("node-y", "zone2")};
  return {
      {"one constraint on node and no existing pods",
       hostFoo(1),
       {},
       {hostNode("node-a"), hostNode("node-b")},
       {},
       {100, 100}},
      {"one constraint on node and only one node is candidate",
       hostFoo(1),
       {fooPod("p-a1", "node-a"), fooPod("p-a2", "node-a"), fooPod("p-b1", "node-b")},
       {hostNode("node-a")},
       {hostNode("node-b")},
       {100}},
      {"one constraint on node and all nodes have the same number of matching pods",
       hostFoo(1),
       {fooPod("p-a1", "node-a"), fooPod("p-b1", "node-b")},
       {hostNode("node-a"), hostNode("node-b")},
       {},
       {100, 100}},
      {"one constraint on node and all 4 nodes are candidates",
       hostFoo(1),
       spread2103,
       abcd,
       {},
       {40, 80, 100, 0}},
      {"one constraint on node and all 4 nodes are candidates with maxSkew=2",
       hostFoo(2),
       spread2103,
       abcd,
       {},
       {50, 83, 100, 16}},
      {"one constraint on node and all 4 nodes are candidates with maxSkew=3",
       hostFoo(3),
       {fooPod("p-a1", "node-a"), fooPod("p-a2", "node-a"), fooPod("p-a3", "node-a"),
        fooPod("p-a4", "node-a"), fooPod("p-b1", "node-b"), fooPod("p-b2", "node-b"),
        fooPod("p-b3", "node-b"), fooPod("p-c1", "node-c"), fooPod("p-c2", "node-c"),
        fooPod("p-d1", "node-d")},
       abcd,
       {},
       {33, 55, 77, 100}},
      {"one constraint on node and 3 out of 4 nodes are candidates",
       hostFoo(1),
       spread4213,
       {hostNode("node-a"), hostNode("node-b"), hostNode("node-x")},
       {hostNode("node-y")},
       {16, 66, 100}},
      {"one constraint on node and 3 out of 4 nodes are candidates and one node doesn't match "
       "topology key",
       hostFoo(1),
       spread4213,
       {hostNode("node-a"), makeNode("node-b", {{"n", "node-b"}}), hostNode("node-x")},
       {hostNode("node-y")},
       {20, 0, 100}},
      {"one constraint on zone and 3 out of 4 nodes are candidates",
       makePod("p").label("foo", "").spread(1, "zone", kScheduleAnyway, sel("foo")),
       spread4213,
       {hostNode("node-a", "zone1"), hostNode("node-b", "zone1"), hostNode("node-x", "zone2")},
       {hostNode("node-y", "zone2")},
       {62, 62, 100}},
      {"two Constraints on zone and node and 2 out of 4 nodes are candidates",
       zoneAndHost,
       {fooPod("p-a1", "node-a"), fooPod("p-a2", "node-a"), fooPod("p-b1", "node-b"),
        fooPod("p-x1", "node-x"), fooPod("p-x2", "node-x"), fooPod("p-y1", "node-y"),
        fooPod("p-y2", "node-y"), fooPod("p-y3", "node-y"), fooPod("p-y4", "node-y")},
       {hostNode("node-a", "zone1"), hostNode("node-x", "zone2")},
       {hostNode("node-b", "zone1"), hostNode("node-y", "zone2")},
       {100, 54}},
      {"two Constraints on zone and node with different labelSelectors",
       fooZoneBarHost,
       differentSelectors,
       abxyZones,
       {},
       {75, 25, 100, 50}},
      {"two Constraints on zone and node with different labelSelectors and some nodes have 0 "
       "pods",
       fooZoneBarHost,
       {makePod("p-b1").node("node-b").label("bar", ""), fooPod("p-x1", "node-x"),
        makePod("p-y1").node("node-y").label("foo", "").label("bar", "")},
       abxyZones,
       {},
       {100, 75, 50, 0}},
      {"two Constraints on zone and node with different labelSelectors and 3 out of 4 nodes are "
       "candidates",
       fooZoneBarHost,
       differentSelectors,
       {hostNode("node-a", "zone1"), hostNode("node-b", "zone1"), hostNode("node-x", "zone2")},
       {hostNode("node-y", "zone2")},
       {75, 25, 100}},
      {"existing pods in a different namespace do not count",
       hostFoo(1),
       {makePod("p-a1").ns("ns1").node("node-a").label("foo", ""), fooPod("p-a2", "node-a"),
        fooPod("p-b1", "node-b"), fooPod("p-b2", "node-b")},
       {hostNode("node-a"), hostNode("node-b")},
       {},
       {100, 50}},
      {"terminating Pods should be excluded",
       hostFoo(1),
       {makePod("p-a").node("node-a").label("foo", "").terminating(), fooPod("p-b", "node-b")},
       {hostNode("node-a"), hostNode("node-b")},
       {},
       {100, 0}},
      // Ours: PreScore counts only nodes passing the pod's node affinity (1.20), so node-y's
      // three pods leave zone2 out of the count: zone1 has 2, zone2 1 (node-x).
      {"zone counts leave out nodes the pod's node affinity rules out",
       makePod("p")
           .label("foo", "")
           .nodeAffinity("zone-member", NodeSelectorOperator::kDoesNotExist, {})
           .spread(1, "zone", kScheduleAnyway, sel("foo")),
       {fooPod("p-a1", "node-a"), fooPod("p-b1", "node-b"), fooPod("p-x1", "node-x"),
        fooPod("p-y1", "node-y"), fooPod("p-y2", "node-y"), fooPod("p-y3", "node-y")},
       {hostNode("node-a", "zone1"), hostNode("node-x", "zone2")},
       {hostNode("node-b", "zone1"),
        makeNode("node-y", {{"zone", "zone2"}, {"zone-member", "no"}, {host, "node-y"}})},
       {50, 100}},
      // Upstream counts a hostname constraint's pods in Score, on whatever candidate it is
      // given, so node-b's pod counts although the pod's affinity rules node-b out.
      {"hostname counts a candidate's own pods even outside the pod's node affinity",
       makePod("p")
           .label("foo", "")
           .nodeAffinity(host, NodeSelectorOperator::kNotIn, {"node-b"})
           .spread(1, host, kScheduleAnyway, sel("foo")),
       {fooPod("p-a1", "node-a"), fooPod("p-a2", "node-a"), fooPod("p-b1", "node-b")},
       {hostNode("node-a"), hostNode("node-b")},
       {},
       {50, 100}},
  };
}

std::vector<std::int64_t> scoreAll(const PodTopologySpread& plugin, const CycleState& state,
                                   const PodInfo& pod, const FakeHandle& handle,
                                   const Nodes& nodes) {
  std::vector<NodeScore> scores;
  for (const auto& n : nodes) {
    std::int64_t s = -1;
    const Status st = plugin.score(state, pod, handle.node(n->name), s);
    INFO(st.message());
    REQUIRE(st.ok());
    scores.push_back({handle.node(n->name).name(), s});
  }
  REQUIRE(plugin.hasNormalizeScore());
  REQUIRE(plugin.normalizeScore(state, pod, scores).ok());
  std::vector<std::int64_t> out;
  for (const auto& s : scores)
    out.push_back(s.score);
  return out;
}

TEST_CASE("Score and NormalizeScore as kube-scheduler's table", "[podtopologyspread][score]") {
  for (const auto& tc : scoreCases()) {
    SECTION(tc.name) {
      Nodes all = tc.nodes;
      all.insert(all.end(), tc.failed_nodes.begin(), tc.failed_nodes.end());
      FakeHandle handle(all, tc.existing);
      PodTopologySpread plugin(listArgs({}), handle);
      std::vector<const NodeInfo*> candidates;
      for (const auto& n : tc.nodes)
        candidates.push_back(&handle.node(n->name));
      CycleState state;
      const Status pre = plugin.preScore(state, tc.pod, candidates);
      if (pre.isSkip()) {
        // Left out by the framework: only right where 1.20 gave every node the same score.
        for (const auto w : tc.want)
          CHECK(w == tc.want.front());
      } else {
        REQUIRE(pre.ok());
        CHECK(scoreAll(plugin, state, tc.pod, handle, tc.nodes) == tc.want);
      }
    }
  }
}

TEST_CASE("system default constraints score the pods of the pod's service",
          "[podtopologyspread][score]") {
  const std::string host(kHostname);
  auto node = [&](std::string name, std::string zone) {
    return makeNode(name, {{host, name}, {kZone, std::move(zone)}});
  };
  auto web = [](std::string name) { return makePod(std::move(name)).label("app", "web"); };
  const Nodes nodes{node("node-a", "zone1"), node("node-b", "zone1"), node("node-x", "zone2")};
  FakeHandle handle(
      nodes, {web("w-1").node("node-a"), web("w-2").node("node-a"), web("w-3").node("node-x"),
              makePod("o-1").node("node-b").label("app", "api")});
  addSpreadingObjects(handle, {.services = {spreadObject("web", "app=web")}});
  PodTopologySpread plugin(systemArgs(), handle);
  const PodInfo pod = web("w-4");
  CycleState state;
  REQUIRE(plugin.preScore(state, pod, handle.nodes()).ok());
  // hostname (maxSkew 3, weight ln 5) and zone (maxSkew 5, weight ln 4, zone1 2 / zone2 1):
  // raw a = 2 ln5 + 2 + 2 ln4 + 4 = 11, b = 2 + 2 ln4 + 4 = 8, x = ln5 + 2 + ln4 + 4 = 8.
  CHECK(scoreAll(plugin, state, pod, handle, nodes) == std::vector<std::int64_t>{72, 100, 100});
}

TEST_CASE("nodes lacking a system default key score 0", "[podtopologyspread][score]") {
  const std::string host(kHostname);
  const Nodes nodes{makeNode("node-a", {{host, "node-a"}}), makeNode("node-b", {{host, "node-b"}})};
  FakeHandle handle(nodes, {makePod("w-1").node("node-a").label("app", "web")});
  addSpreadingObjects(handle, {.services = {spreadObject("web", "app=web")}});
  PodTopologySpread plugin(systemArgs(), handle);
  const PodInfo pod = makePod("w-2").label("app", "web");
  CycleState state;
  REQUIRE(plugin.preScore(state, pod, handle.nodes()).ok());
  CHECK(preScoreState(state).ignored_nodes == 2);
  CHECK(scoreAll(plugin, state, pod, handle, nodes) == std::vector<std::int64_t>{0, 0});
}

TEST_CASE("pods without ScheduleAnyway constraints get Skip at PreScore",
          "[podtopologyspread][score]") {
  // 1.20 scored every node 0 and normalised them all to the maximum: a constant that changes
  // no placement, so the framework may leave the plugin out.
  const Nodes nodes{hostNode("node-a"), hostNode("node-b")};
  FakeHandle handle(nodes, {fooPod("p-a1", "node-a"), fooPod("p-a2", "node-a")});
  PodTopologySpread plugin(systemArgs(), handle);
  SECTION("no constraints and nothing selecting the pod") {
    const PodInfo pod = makePod("p").label("foo", "");
    CycleState state;
    CHECK(plugin.preScore(state, pod, handle.nodes()).isSkip());
    CHECK(state.read<PreScoreState>(kPreScoreStateKey) == nullptr);
  }
  SECTION("only DoNotSchedule constraints") {
    const PodInfo pod =
        makePod("p").label("foo", "").spread(1, std::string(kHostname), kDoNotSchedule, sel("foo"));
    CycleState state;
    CHECK(plugin.preScore(state, pod, handle.nodes()).isSkip());
    CHECK(state.read<PreScoreState>(kPreScoreStateKey) == nullptr);
  }
  SECTION("an empty state (what 1.20 wrote) scores 0 and normalises every node to the maximum") {
    const PodInfo pod = makePod("p").label("foo", "");
    CycleState state;
    state.write(kPreScoreStateKey, std::make_unique<PreScoreState>());
    std::int64_t raw = -1;
    REQUIRE(plugin.score(state, pod, handle.node("node-a"), raw).ok());
    CHECK(raw == 0);
    CHECK(scoreAll(plugin, state, pod, handle, nodes) == std::vector<std::int64_t>{100, 100});
  }
}

TEST_CASE("Score without PreScore state is an error", "[podtopologyspread][score]") {
  FakeHandle handle({hostNode("node-a")}, {});
  PodTopologySpread plugin(systemArgs(), handle);
  CycleState state;
  const PodInfo pod = makePod("p");
  std::int64_t raw = -1;
  const Status st = plugin.score(state, pod, handle.node("node-a"), raw);
  CHECK(st.code() == Code::kError);
  CHECK(st.message() == "error reading \"PreScorePodTopologySpread\" from cycleState: not found");
  std::vector<NodeScore> scores{{"node-a", 0}};
  CHECK(plugin.normalizeScore(state, pod, scores).code() == Code::kError);
  SECTION("PreScore over no candidates writes no state, as upstream") {
    REQUIRE(plugin.preScore(state, pod, {}).ok());
    CHECK(state.read<PreScoreState>(kPreScoreStateKey) == nullptr);
  }
}

}  // namespace
}  // namespace pts_test
