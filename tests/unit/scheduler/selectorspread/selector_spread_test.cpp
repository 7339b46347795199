// kube-scheduler 1.20's TestSelectorSpreadScore and TestZoneSelectorSpreadPriority tables (the
// expected scores worked out from the plugin's formula), the zone key, the Skip cases and the
// registry entry.
#include <boost/json.hpp>

#include <catch2/catch.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "catch_expected.h"
#include "fixtures.h"
#include "framework/cycle_state.h"
#include "framework/plugin_registry.h"
#include "plugins/upstream/helper/spread_selectors.h"
#include "plugins/upstream/podtopologyspread/register.h"
#include "plugins/upstream/selectorspread/register.h"
#include "plugins/upstream/selectorspread/selector_spread.h"
#include "scheduler/fake_handle.h"

namespace selectorspread_test {
namespace {

using koord::roles::scheduler::Code;
using koord::roles::scheduler::CycleState;
using koord::roles::scheduler::kMaxNodeScore;
using koord::roles::scheduler::Node;
using koord::roles::scheduler::NodeScore;
using koord::roles::scheduler::PluginRegistry;
using koord::roles::scheduler::PreScorePlugin;
using koord::roles::scheduler::ScorePlugin;
using koord::roles::scheduler::Status;
using koord::roles::scheduler::UnsatisfiableConstraintAction;
using koord::roles::scheduler::testkit::FakeHandle;
using koord::roles::scheduler::testkit::snapshotOf;
using koord::roles::scheduler::upstream::kSelectorSpreadName;
using koord::roles::scheduler::upstream::SelectorSpread;
using koord::roles::scheduler::upstream::ZoneKey;
using koord::roles::scheduler::upstream::zoneKey;

using Nodes = std::vector<std::shared_ptr<const Node>>;
using Scores = std::map<std::string, std::int64_t>;

struct Case {
  std::string name;
  PodInfo pod;
  std::vector<PodInfo> existing;
  Objects objects;
  Scores want;
  /// PreScore answers Skip: upstream would score every node alike (`want`, all equal).
  bool skip = false;
};

/// Runs PreScore, Score on every node and NormalizeScore; the scores by node name.
Scores run(const Case& tc, const Nodes& nodes) {
  FakeHandle handle(snapshotOf(nodes, tc.existing));
  addObjects(handle.fakeCluster(), tc.objects);
  SelectorSpread plugin(handle);
  CycleState state;
  const Status pre = plugin.preScore(state, tc.pod, handle.nodes());
  if (tc.skip) {
    CHECK(pre.isSkip());
    return tc.want;
  }
  REQUIRE(pre.ok());
  std::vector<NodeScore> scores;
  for (const auto* info : handle.nodes()) {
    std::int64_t raw = -1;
    const Status st = plugin.score(state, tc.pod, *info, raw);
    REQUIRE(st.ok());
    scores.push_back({info->node->name, raw});
  }
  REQUIRE(plugin.normalizeScore(state, tc.pod, scores).ok());
  Scores out;
  for (const auto& s : scores)
    out[std::string(s.name)] = s.score;
  return out;
}

const Labels kLabels1{{"foo", "bar"}, {"baz", "blah"}};
const Labels kLabels2{{"bar", "foo"}, {"baz", "blah"}};

Scores two(std::int64_t node1, std::int64_t node2) {
  return {{"node1", node1}, {"node2", node2}};
}

std::vector<Case> spreadCases() {
  auto pod = [](const Labels& l) { return podWith("p", l).obj(); };
  auto on = [](std::string name, std::string node, const Labels& l, std::string ns = "default") {
    return podWith(std::move(name), l).node(std::move(node)).ns(std::move(ns)).obj();
  };
  const Labels fooBarBarFoo{{"foo", "bar"}, {"bar", "foo"}};
  // Three pods: labels2 and labels1 on node1, labels1 on node2.
  const std::vector<PodInfo> threePods{on("a", "node1", kLabels2), on("b", "node1", kLabels1),
                                       on("c", "node2", kLabels1)};
  const std::vector<Case> cases{
      {"nothing scheduled", makePod("p").obj(), {}, {}, two(100, 100), true},
      {"no services", pod(kLabels1), {makePod("a").node("node1").obj()}, {}, two(100, 100), true},
      {"different services",
       pod(kLabels1),
       {on("a", "node1", kLabels2)},
       {.services = {object("s1", "key=value")}},
       two(100, 100),
       true},
      {"two pods, one service pod",
       pod(kLabels1),
       {on("a", "node1", kLabels2), on("b", "node2", kLabels1)},
       {.services = {object("s1", "foo=bar,baz=blah")}},
       two(100, 0)},
      {"pods of other namespaces do not count",
       pod(kLabels1),
       {on("a", "node1", kLabels2), on("b", "node1", kLabels1, "ns1"), on("c", "node2", kLabels1),
        on("d", "node2", kLabels2)},
       {.services = {object("s1", "foo=bar,baz=blah")}},
       two(100, 0)},
      {"five pods, one service pod in specific namespace",
       podWith("p", kLabels1).ns("ns1").obj(),
       {on("a", "node1", kLabels2), on("b", "node1", kLabels1), on("c", "node1", kLabels1, "ns2"),
        on("d", "node2", kLabels1, "ns1"), on("e", "node2", kLabels2)},
       {.services = {object("s1", "foo=bar,baz=blah", "ns1")}},
       two(100, 0)},
      {"a service of another namespace selects nothing",
       pod(kLabels1),
       threePods,
       {.services = {object("s1", "foo=bar,baz=blah", "ns1")}},
       two(100, 100),
       true},
      {"three pods, two service pods on different nodes",
       pod(kLabels1),
       threePods,
       {.services = {object("s1", "foo=bar,baz=blah")}},
       two(0, 0)},
      {"four pods, three service pods",
       pod(kLabels1),
       {on("a", "node1", kLabels2), on("b", "node1", kLabels1), on("c", "node2", kLabels1),
        on("d", "node2", kLabels1)},
       {.services = {object("s1", "foo=bar,baz=blah")}},
       two(50, 0)},
      {"service with partial pod label matches",
       pod(kLabels1),
       threePods,
       {.services = {object("s1", "baz=blah")}},
       two(0, 50)},
      // baz=blah selects both label sets, foo=bar only labels1: together the labels1 pods.
      {"service with partial pod label matches with service and replication controller",
       pod(kLabels1),
       threePods,
       {.services = {object("s1", "baz=blah")},
        .rcs = {object("rc1", "foo=bar"), object("rc2", "bar=foo")}},
       two(0, 0)},
      {"service with partial pod label matches with service and replica set",
       pod(kLabels1),
       threePods,
       {.services = {object("s1", "baz=blah")},
        .rss = {object("rs1", "foo=bar"), object("rs2", "bar=foo")}},
       two(0, 0)},
      {"service with partial pod label matches with service and statefulset",
       pod(kLabels1),
       threePods,
       {.services = {object("s1", "baz=blah")},
        .sss = {object("ss1", "foo=bar"), object("ss2", "bar=foo")}},
       two(0, 0)},
      // Taken together the Service and the controller select none of the pods: all score 100,
      // though the plugin did score (the selector is not empty).
      {"disjoined service and replication controller matches no pods",
       pod(fooBarBarFoo),
       threePods,
       {.services = {object("s1", "bar=foo")}, .rcs = {object("rc3", "foo=bar")}},
       two(100, 100)},
      {"disjoined service and replica set matches no pods",
       pod(fooBarBarFoo),
       threePods,
       {.services = {object("s1", "bar=foo")}, .rss = {object("rs3", "foo=bar")}},
       two(100, 100)},
      {"disjoined service and stateful set matches no pods",
       pod(fooBarBarFoo),
       threePods,
       {.services = {object("s1", "bar=foo")}, .sss = {object("ss3", "foo=bar")}},
       two(100, 100)},
      {"replication controller with partial pod label matches",
       pod(kLabels1),
       threePods,
       {.rcs = {object("rc1", "foo=bar")}},
       two(0, 0)},
      {"replica set with partial pod label matches",
       pod(kLabels1),
       threePods,
       {.rss = {object("rs1", "foo=bar")}},
       two(0, 0)},
      {"stateful set with partial pod label matches",
       pod(kLabels1),
       threePods,
       {.sss = {object("ss1", "foo=bar")}},
       two(0, 0)},
      {"another replication controller with partial pod label matches",
       pod(kLabels1),
       threePods,
       {.rcs = {object("rc3", "baz=blah")}},
       two(0, 50)},
      {"another replica set with partial pod label matches",
       pod(kLabels1),
       threePods,
       {.rss = {object("rs3", "baz=blah")}},
       two(0, 50)},
      {"another stateful set with partial pod label matches",
       pod(kLabels1),
       threePods,
       {.sss = {object("ss3", "baz=blah")}},
       two(0, 50)},
      {"terminating pods do not count",
       pod(kLabels1),
       {on("a", "node1", kLabels1), podWith("b", kLabels1).node("node2").terminating().obj(),
        on("c", "node2", kLabels1)},
       {.rss = {object("rs1", "foo=bar")}},
       two(0, 0)},
      // Upstream scores every node 0 for a pod with spread constraints of its own.
      {"a pod with its own spread constraints",
       podWith("p", kLabels1)
           .spread(1, "foo", UnsatisfiableConstraintAction::kDoNotSchedule, sel("foo"))
           .obj(),
       threePods,
       {.sss = {object("ss1", "baz=blah")}},
       two(0, 0),
       true},
  };
  return cases;
}

TEST_CASE("SelectorSpread scores as kube-scheduler's table", "[selectorspread]") {
  const Nodes nodes{makeNode("node1"), makeNode("node2")};
  for (const auto& tc : spreadCases()) {
    SECTION(tc.name) {
      CHECK(run(tc, nodes) == tc.want);
    }
  }
}

constexpr std::string_view kZone = "topology.kubernetes.io/zone";

TEST_CASE("SelectorSpread favours zones with fewer pods as kube-scheduler's table",
          "[selectorspread]") {
  const Nodes nodes{makeNode("m1.z1", {{std::string(kZone), "zone1"}}),
                    makeNode("m1.z2", {{std::string(kZone), "zone2"}}),
                    makeNode("m2.z2", {{std::string(kZone), "zone2"}}),
                    makeNode("m1.z3", {{std::string(kZone), "zone3"}}),
                    makeNode("m2.z3", {{std::string(kZone), "zone3"}}),
                    makeNode("m3.z3", {{std::string(kZone), "zone3"}})};
  const Labels labels1{{"label1", "l1"}, {"baz", "blah"}};
  const Labels labels2{{"label2", "l2"}, {"baz", "blah"}};
  auto scores = [](std::int64_t z1, std::int64_t m1z2, std::int64_t m2z2, std::int64_t m1z3,
                   std::int64_t m2z3, std::int64_t m3z3) {
    return Scores{{"m1.z1", z1},   {"m1.z2", m1z2}, {"m2.z2", m2z2},
                  {"m1.z3", m1z3}, {"m2.z3", m2z3}, {"m3.z3", m3z3}};
  };
  int serial = 0;
  auto on = [&](std::string node, const Labels& l) {
    return podWith("e" + std::to_string(serial++), l).node(std::move(node)).obj();
  };
  const PodInfo pod = podWith("p", labels1);
  const Objects service{.services = {object("s1", "label1=l1,baz=blah")}};
  const std::vector<Case> cases{
      {"nothing scheduled", makePod("p"), {}, {}, scores(100, 100, 100, 100, 100, 100), true},
      {"no services", pod, {on("m1.z1", {})}, {}, scores(100, 100, 100, 100, 100, 100), true},
      {"different services",
       pod,
       {on("m1.z1", labels2)},
       {.services = {object("s1", "key=value")}},
       scores(100, 100, 100, 100, 100, 100),
       true},
      {"two pods, 0 matching",
       pod,
       {on("m1.z1", labels2), on("m1.z2", labels2)},
       service,
       scores(100, 100, 100, 100, 100, 100)},
      // m2.z2: 100 for the node blended with 0 for its zone, 100/3.
      {"two pods, 1 matching (in z2)",
       pod,
       {on("m1.z1", labels2), on("m1.z2", labels1)},
       service,
       scores(100, 0, 33, 100, 100, 100)},
      {"five pods, 3 matching (z2=2, z3=1)",
       pod,
       {on("m1.z1", labels2), on("m1.z2", labels1), on("m2.z2", labels1), on("m1.z3", labels2),
        on("m2.z3", labels1)},
       service,
       scores(100, 0, 0, 66, 33, 66)},
      {"four pods, 3 matching (z1=1, z2=1, z3=1)",
       pod,
       {on("m1.z1", labels1), on("m1.z2", labels1), on("m2.z2", labels2), on("m1.z3", labels1)},
       service,
       scores(0, 0, 33, 0, 33, 33)},
      {"five pods, 4 matching (z1=1, z2=2, z3=1)",
       pod,
       {on("m1.z1", labels1), on("m1.z2", labels1), on("m2.z2", labels1), on("m2.z2", labels2),
        on("m1.z3", labels1)},
       service,
       scores(33, 0, 0, 33, 66, 66)},
      // Two pods on m1.z3: the node maximum is 2, so m1.z2's single pod halves its node score.
      {"replication controller spreading (z1=0, z2=1, z3=2)",
       pod,
       {on("m1.z3", labels1), on("m1.z2", labels1), on("m1.z3", labels1)},
       {.rcs = {object("rc1", "label1=l1,baz=blah")}},
       scores(100, 50, 66, 0, 33, 33)},
  };
  for (const auto& tc : cases) {
    SECTION(tc.name) {
      CHECK(run(tc, nodes) == tc.want);
    }
  }
}

TEST_CASE("SelectorSpread blends the zone in only for nodes that have one", "[selectorspread]") {
  const Nodes nodes{makeNode("a", {{std::string(kZone), "z1"}}),
                    makeNode("b", {{std::string(kZone), "z2"}}), makeNode("c"), makeNode("d")};
  const Case tc{"mixed",
                podWith("p", kLabels1),
                {podWith("a1", kLabels1).node("a"), podWith("a2", kLabels1).node("a"),
                 podWith("b1", kLabels1).node("b")},
                {.services = {object("s1", "foo=bar")}},
                {{"a", 0}, {"b", 50}, {"c", 100}, {"d", 100}}};
  CHECK(run(tc, nodes) == tc.want);
}

TEST_CASE("SelectorSpread's zone key is GetZoneKey's", "[selectorspread]") {
  const std::string beta_zone = "failure-domain.beta.kubernetes.io/zone";
  const std::string beta_region = "failure-domain.beta.kubernetes.io/region";
  const std::string zone(kZone);
  const std::string region = "topology.kubernetes.io/region";
  CHECK(zoneKey({}).empty());
  CHECK(zoneKey({{"other", "x"}}).empty());
  CHECK(zoneKey({{zone, "a"}}) == ZoneKey{"", "a"});
  CHECK(zoneKey({{region, "r"}}) == ZoneKey{"r", ""});
  // The beta label wins when present, even empty.
  CHECK(zoneKey({{beta_zone, "b"}, {zone, "a"}}) == ZoneKey{"", "b"});
  CHECK(zoneKey({{beta_region, "rb"}, {region, "r"}, {zone, "a"}}) == ZoneKey{"rb", "a"});
  CHECK(zoneKey({{beta_zone, ""}, {zone, "a"}}).empty());

  SECTION("a zone's name is unique only within its region") {
    const Nodes nodes{makeNode("r1a", {{region, "r1"}, {zone, "a"}}),
                      makeNode("r2a", {{region, "r2"}, {zone, "a"}}),
                      makeNode("r2a-2", {{region, "r2"}, {zone, "a"}})};
    // One pod on r1a: r2's zone a holds none, so both its nodes score 100.
    const Case tc{"regions",
                  podWith("p", kLabels1),
                  {podWith("x", kLabels1).node("r1a")},
                  {.services = {object("s1", "foo=bar")}},
                  {{"r1a", 0}, {"r2a", 100}, {"r2a-2", 100}}};
    CHECK(run(tc, nodes) == tc.want);
  }
}

TEST_CASE("SelectorSpread errors", "[selectorspread]") {
  FakeHandle handle(snapshotOf({makeNode("node1")}));
  SelectorSpread plugin(handle);
  CycleState state;
  const PodInfo pod = podWith("p", kLabels1);
  std::int64_t raw = -1;
  SECTION("Score without PreScore's state") {
    const Status st = plugin.score(state, pod, handle.node("node1"), raw);
    CHECK(st.code() == Code::kError);
    CHECK(st.message() == "Error reading \"PreScoreSelectorSpread\" from cycleState: not found");
  }
  SECTION("NormalizeScore on a node the snapshot lacks") {
    std::vector<NodeScore> scores{{"gone", 1}};
    const Status st = plugin.normalizeScore(state, pod, scores);
    CHECK(st.code() == Code::kError);
    CHECK(st.message() ==
          "getting node \"gone\" from Snapshot: nodeinfo not found for node name \"gone\"");
  }
}

TEST_CASE("SelectorSpread registers without args and declares the spreading informers",
          "[selectorspread]") {
  namespace helper = koord::roles::scheduler::upstream::helper;
  PluginRegistry registry;
  koord::roles::scheduler::upstream::registerSelectorSpread(registry);
  const auto* factory = registry.find(std::string(kSelectorSpreadName));
  REQUIRE(factory != nullptr);
  const std::set<std::string> want{
      std::string(helper::kServiceSource), std::string(helper::kReplicationControllerSource),
      std::string(helper::kReplicaSetSource), std::string(helper::kStatefulSetSource)};
  std::set<std::string> keys;
  for (const auto& d : factory->objects)
    keys.insert(d.key);
  CHECK(keys == want);

  // PodTopologySpread declares the same keys: the registry runs one informer each.
  koord::roles::scheduler::upstream::registerPodTopologySpread(registry);
  std::set<std::string> shared;
  std::size_t count = 0;
  for (const auto* d : registry.objects()) {
    shared.insert(d->key);
    ++count;
  }
  CHECK(shared == want);
  CHECK(count == want.size());

  auto args = factory->decode_args(nullptr, "kubescheduler.config.k8s.io/v1beta1");
  REQUIRE(args);
  CHECK(*args == nullptr);
  const boost::json::value bad = boost::json::parse(R"({"x":1})");
  CHECK_FALSE(factory->decode_args(&bad, "kubescheduler.config.k8s.io/v1beta1"));

  FakeHandle handle(snapshotOf({makeNode("node1")}));
  auto built = factory->create(nullptr, handle);
  REQUIRE(built);
  CHECK((*built)->name() == "SelectorSpread");
  CHECK(dynamic_cast<PreScorePlugin*>(built->get()) != nullptr);
  auto* score = dynamic_cast<ScorePlugin*>(built->get());
  REQUIRE(score != nullptr);
  CHECK(score->hasNormalizeScore());
}

}  // namespace
}  // namespace selectorspread_test
