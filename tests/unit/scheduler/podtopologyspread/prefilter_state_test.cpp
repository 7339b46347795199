// kube-scheduler 1.20's TestPreFilterState (default constraints selecting by the pod's Services
// and ReplicaSets), TestPreFilterStateAddPod and TestPreFilterStateRemovePod.
#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <vector>

#include "fixtures.h"
#include "state_check.h"

namespace pts_test {
namespace {

using koord::kube::NodeSelectorOperator;
using koord::roles::scheduler::upstream::DefaultSpreadConstraint;

using Nodes = std::vector<std::shared_ptr<const Node>>;

PodInfo fooPod(std::string name, std::string node) {
  return makePod(std::move(name)).node(std::move(node)).label("foo", "");
}

Nodes fourNodes() {
  return {zoneNode("node-a", "zone1"), zoneNode("node-b", "zone1"), zoneNode("node-x", "zone2"),
          zoneNode("node-y", "zone2")};
}

WantConstraint zoneFoo(std::pair<WantPath, WantPath> paths,
                       std::map<std::string, std::int32_t> counts) {
  return {1, "zone", sel("foo"), std::move(paths), std::move(counts)};
}

WantConstraint nodeFoo(std::pair<WantPath, WantPath> paths,
                       std::map<std::string, std::int32_t> counts) {
  return {1, "node", sel("foo"), std::move(paths), std::move(counts)};
}

const std::pair<WantPath, WantPath> kNoPaths{WantPath{}, WantPath{}};

struct PreFilterCase {
  std::string name;
  PodInfo pod;
  Nodes nodes;
  std::vector<PodInfo> existing;
  std::shared_ptr<const PodTopologySpreadArgs> args;
  WantState want;
  SpreadingObjects objects = {};
};

std::vector<PreFilterCase> preFilterCases() {
  const DefaultSpreadConstraint node3{3, "node", kDoNotSchedule};
  const DefaultSpreadConstraint node2soft{2, "node", kScheduleAnyway};
  const DefaultSpreadConstraint rack5{5, "rack", kDoNotSchedule};
  return {
      {"clean cluster with one spreadConstraint",
       makePod("p").label("foo", "").spread(5, "zone", kDoNotSchedule, sel("foo=bar")),
       fourNodes(),
       {},
       listArgs({}),
       {{5, "zone", sel("foo=bar"), {{"zone1", 0}, {"zone2", 0}}, {{"zone1", 0}, {"zone2", 0}}}}},
      {"normal case with one spreadConstraint",
       makePod("p").label("foo", "").spread(1, "zone", kDoNotSchedule, sel("foo")),
       fourNodes(),
       {fooPod("p-a1", "node-a"), fooPod("p-a2", "node-a"), fooPod("p-b1", "node-b"),
        fooPod("p-y1", "node-y"), fooPod("p-y2", "node-y")},
       listArgs({}),
       {zoneFoo({{"zone2", 2}, {"zone1", 3}}, {{"zone1", 3}, {"zone2", 2}})}},
      {"normal case with one spreadConstraint on a 3-zone cluster",
       makePod("p").label("foo", "").spread(1, "zone", kDoNotSchedule, sel("foo")),
       {zoneNode("node-a", "zone1"), zoneNode("node-b", "zone1"), zoneNode("node-x", "zone2"),
        zoneNode("node-y", "zone2"), zoneNode("node-o", "zone3"), zoneNode("node-p", "zone3")},
       {fooPod("p-a1", "node-a"), fooPod("p-a2", "node-a"), fooPod("p-b1", "node-b"),
        fooPod("p-y1", "node-y"), fooPod("p-y2", "node-y")},
       listArgs({}),
       {zoneFoo({{"zone3", 0}, {"zone2", 2}}, {{"zone1", 3}, {"zone2", 2}, {"zone3", 0}})}},
      {"namespace mismatch doesn't count",
       makePod("p").label("foo", "").spread(1, "zone", kDoNotSchedule, sel("foo")),
       fourNodes(),
       {fooPod("p-a1", "node-a"), makePod("p-a2").ns("ns1").node("node-a").label("foo", ""),
        fooPod("p-b1", "node-b"), makePod("p-y1").ns("ns2").node("node-y").label("foo", ""),
        fooPod("p-y2", "node-y")},
       listArgs({}),
       {zoneFoo({{"zone2", 1}, {"zone1", 2}}, {{"zone1", 2}, {"zone2", 1}})}},
      {"normal case with two spreadConstraints",
       makePod("p")
           .label("foo", "")
           .spread(1, "zone", kDoNotSchedule, sel("foo"))
           .spread(1, "node", kDoNotSchedule, sel("foo")),
       fourNodes(),
       {fooPod("p-a1", "node-a"), fooPod("p-a2", "node-a"), fooPod("p-b1", "node-b"),
        fooPod("p-y1", "node-y"), fooPod("p-y2", "node-y"), fooPod("p-y3", "node-y"),
        fooPod("p-y4", "node-y")},
       listArgs({}),
       {zoneFoo({{"zone1", 3}, {"zone2", 4}}, {{"zone1", 3}, {"zone2", 4}}),
        nodeFoo({{"node-x", 0}, {"node-b", 1}},
                {{"node-a", 2}, {"node-b", 1}, {"node-x", 0}, {"node-y", 4}})}},
      {"soft spreadConstraints should be bypassed",
       makePod("p")
           .label("foo", "")
           .spread(1, "zone", kScheduleAnyway, sel("foo"))
           .spread(1, "zone", kDoNotSchedule, sel("foo"))
           .spread(1, "node", kScheduleAnyway, sel("foo"))
           .spread(1, "node", kDoNotSchedule, sel("foo")),
       {zoneNode("node-a", "zone1"), zoneNode("node-b", "zone1"), zoneNode("node-y", "zone2")},
       {fooPod("p-a1", "node-a"), fooPod("p-a2", "node-a"), fooPod("p-b1", "node-b"),
        fooPod("p-y1", "node-y"), fooPod("p-y2", "node-y"), fooPod("p-y3", "node-y"),
        fooPod("p-y4", "node-y")},
       listArgs({}),
       {zoneFoo({{"zone1", 3}, {"zone2", 4}}, {{"zone1", 3}, {"zone2", 4}}),
        nodeFoo({{"node-b", 1}, {"node-a", 2}}, {{"node-a", 2}, {"node-b", 1}, {"node-y", 4}})}},
      {"different labelSelectors - simple version",
       makePod("p")
           .label("foo", "")
           .label("bar", "")
           .spread(1, "zone", kDoNotSchedule, sel("foo"))
           .spread(1, "node", kDoNotSchedule, sel("bar")),
       {zoneNode("node-a", "zone1"), zoneNode("node-b", "zone1"), zoneNode("node-y", "zone2")},
       {fooPod("p-a", "node-a"), makePod("p-b").node("node-b").label("bar", "")},
       listArgs({}),
       {zoneFoo({{"zone2", 0}, {"zone1", 1}}, {{"zone1", 1}, {"zone2", 0}}),
        {1,
         "node",
         sel("bar"),
         {{"node-a", 0}, {"node-y", 0}},
         {{"node-a", 0}, {"node-b", 1}, {"node-y", 0}}}}},
      {"different labelSelectors - complex pods",
       makePod("p")
           .label("foo", "")
           .label("bar", "")
           .spread(1, "zone", kDoNotSchedule, sel("foo"))
           .spread(1, "node", kDoNotSchedule, sel("bar")),
       {zoneNode("node-a", "zone1"), zoneNode("node-b", "zone1"), zoneNode("node-y", "zone2")},
       {fooPod("p-a1", "node-a"), makePod("p-a2").node("node-a").label("foo", "").label("bar", ""),
        fooPod("p-b1", "node-b"), fooPod("p-y1", "node-y"),
        makePod("p-y2").node("node-y").label("foo", "").label("bar", ""), fooPod("p-y3", "node-y"),
        makePod("p-y4").node("node-y").label("foo", "").label("bar", "")},
       listArgs({}),
       {zoneFoo({{"zone1", 3}, {"zone2", 4}}, {{"zone1", 3}, {"zone2", 4}}),
        {1,
         "node",
         sel("bar"),
         {{"node-b", 0}, {"node-a", 1}},
         {{"node-a", 1}, {"node-b", 0}, {"node-y", 2}}}}},
      {"two spreadConstraints and with node affinity",
       makePod("p")
           .label("foo", "")
           .nodeAffinity("node", NodeSelectorOperator::kNotIn, {"node-x"})
           .spread(1, "zone", kDoNotSchedule, sel("foo"))
           .spread(1, "node", kDoNotSchedule, sel("foo")),
       fourNodes(),
       {fooPod("p-a1", "node-a"), fooPod("p-a2", "node-a"), fooPod("p-b1", "node-b"),
        fooPod("p-y1", "node-y"), fooPod("p-y2", "node-y"), fooPod("p-y3", "node-y"),
        fooPod("p-y4", "node-y")},
       listArgs({}),
       {zoneFoo({{"zone1", 3}, {"zone2", 4}}, {{"zone1", 3}, {"zone2", 4}}),
        nodeFoo({{"node-b", 1}, {"node-a", 2}}, {{"node-a", 2}, {"node-b", 1}, {"node-y", 4}})}},
      // Upstream's default-constraint cases: the selector is that of the pod's Service.
      {"default constraints and a service",
       makePod("p").label("foo", "bar").label("baz", "kar"),
       {},
       {},
       listArgs({node3, node2soft, rack5}),
       {{3, "node", sel("foo=bar"), kNoPaths, {}}, {5, "rack", sel("foo=bar"), kNoPaths, {}}},
       {.services = {spreadObject("svc", "foo=bar")}}},
      {"default constraints and a service that doesn't match",
       makePod("p").label("foo", "bar"),
       {},
       {},
       listArgs({node3}),
       {},
       {.services = {spreadObject("svc", "baz=kep")}}},
      {"default constraints and a service but pod has constraints",
       makePod("p")
           .label("foo", "bar")
           .label("baz", "tar")
           .spread(1, "zone", kDoNotSchedule, sel("baz=tar"))
           .spread(2, "planet", kScheduleAnyway, sel("fot=rok")),
       {},
       {},
       listArgs({{2, "node", kDoNotSchedule}}),
       {{1, "zone", sel("baz=tar"), kNoPaths, {}}},
       {.services = {spreadObject("svc", "foo=bar")}}},
      {"default soft constraints and a service",
       makePod("p").label("foo", "bar"),
       {},
       {},
       listArgs({node2soft}),
       {},
       {.services = {spreadObject("svc", "foo=bar")}}},
      {"system defaults are soft only",
       makePod("p").label("foo", "bar"),
       fourNodes(),
       {},
       systemArgs(),
       {},
       {.services = {spreadObject("svc", "foo=bar")}}},
      // Ours: what a default constraint counts.
      {"default constraints count the pods of the pod's Service and ReplicaSet",
       makePod("p").label("app", "web").label("pod-template-hash", "h1"),
       fourNodes(),
       {makePod("w-1").node("node-a").label("app", "web").label("pod-template-hash", "h1"),
        makePod("w-2").node("node-a").label("app", "web").label("pod-template-hash", "h1"),
        makePod("old-revision").node("node-x").label("app", "web").label("pod-template-hash", "h0"),
        makePod("other-app").node("node-y").label("app", "api").label("pod-template-hash", "h1"),
        makePod("other-ns")
            .ns("ns1")
            .node("node-y")
            .label("app", "web")
            .label("pod-template-hash", "h1"),
        makePod("gone")
            .node("node-b")
            .label("app", "web")
            .label("pod-template-hash", "h1")
            .terminating()},
       listArgs({{1, "zone", kDoNotSchedule}}),
       // The Service's set, then the ReplicaSet's requirements added (app=web twice, as upstream).
       {{1,
         "zone",
         sel("app=web,app=web,pod-template-hash=h1"),
         {{"zone2", 0}, {"zone1", 2}},
         {{"zone1", 2}, {"zone2", 0}}}},
       {.services = {spreadObject("web", "app=web")},
        .replica_sets = {spreadObject("web-h1", "app=web,pod-template-hash=h1"),
                         spreadObject("web-h0", "app=web,pod-template-hash=h0")}}},
      {"default constraints and a pod nothing selects",
       makePod("p").label("app", "web"),
       fourNodes(),
       {},
       listArgs({{1, "zone", kDoNotSchedule}}),
       {},
       {.services = {spreadObject("web", "app=web", "ns1")},
        .replica_sets = {spreadObject("web-h1", "app=web,pod-template-hash=h1")}}},
      // 1.20 registers only the domains of nodes passing the pod's node affinity, then counts
      // every node in those domains: node-x's pods still count towards zone2.
      {"pods on a node the affinity excludes count in a domain another node opens",
       makePod("p")
           .label("foo", "")
           .nodeAffinity("node", NodeSelectorOperator::kNotIn, {"node-x"})
           .spread(1, "zone", kDoNotSchedule, sel("foo"))
           .spread(1, "node", kDoNotSchedule, sel("foo")),
       fourNodes(),
       {fooPod("p-x1", "node-x"), fooPod("p-x2", "node-x"), fooPod("p-y1", "node-y")},
       listArgs({}),
       {zoneFoo({{"zone1", 0}, {"zone2", 3}}, {{"zone1", 0}, {"zone2", 3}}),
        nodeFoo({{"node-a", 0}, {"node-b", 0}}, {{"node-a", 0}, {"node-b", 0}, {"node-y", 1}})}},
      {"nodeSelector keeps other zones out entirely",
       makePod("p")
           .label("foo", "")
           .nodeSelector("zone", "zone1")
           .spread(1, "zone", kDoNotSchedule, sel("foo")),
       fourNodes(),
       {fooPod("p-a1", "node-a"), fooPod("p-x1", "node-x"), fooPod("p-y1", "node-y")},
       listArgs({}),
       {zoneFoo({{"zone1", 1}, {}}, {{"zone1", 1}})}},
      {"nodes missing a topology key open no domain",
       makePod("p")
           .label("foo", "")
           .spread(1, "zone", kDoNotSchedule, sel("foo"))
           .spread(1, "node", kDoNotSchedule, sel("foo")),
       {zoneNode("node-a", "zone1"), makeNode("node-x", {{"zone", "zone2"}})},
       {fooPod("p-a1", "node-a"), fooPod("p-x1", "node-x")},
       listArgs({}),
       {zoneFoo({{"zone1", 1}, {}}, {{"zone1", 1}}),
        nodeFoo({{"node-a", 1}, {}}, {{"node-a", 1}})}},
      {"terminating pods are not counted",
       makePod("p").label("foo", "").spread(1, "node", kDoNotSchedule, sel("foo")),
       {makeNode("node-a", {{"node", "node-a"}}), makeNode("node-b", {{"node", "node-b"}})},
       {makePod("p-a").node("node-a").label("foo", "").terminating(), fooPod("p-b", "node-b")},
       listArgs({}),
       {nodeFoo({{"node-a", 0}, {"node-b", 1}}, {{"node-a", 0}, {"node-b", 1}})}},
  };
}

TEST_CASE("PreFilter state matches kube-scheduler's table", "[podtopologyspread][prefilter]") {
  for (const auto& tc : preFilterCases()) {
    SECTION(tc.name) {
      FakeHandle handle(tc.nodes, tc.existing);
      addSpreadingObjects(handle, tc.objects);
      PodTopologySpread plugin(tc.args, handle);
      CycleState state;
      const Status pre = plugin.preFilter(state, tc.pod);
      if (tc.want.empty()) {
        // No DoNotSchedule constraints: Skip, and no state for Filter to read.
        CHECK(pre.isSkip());
        CHECK(state.read<PreFilterState>(kPreFilterStateKey) == nullptr);
      } else {
        REQUIRE(pre.ok());
        checkPreFilterState(preFilterState(state), tc.want);
      }
    }
  }
}

struct UpdateCase {
  std::string name;
  PodInfo preemptor;
  PodInfo pod;  // the pod added or removed
  Nodes nodes;
  std::vector<PodInfo> existing;
  std::string node;  // where `pod` is added or removed
  WantState want;
};

std::vector<UpdateCase> addPodCases() {
  const auto nodeOnly = makePod("p").label("foo", "").spread(1, "node", kDoNotSchedule, sel("foo"));
  const auto zoneAndNode = makePod("p")
                               .label("foo", "")
                               .spread(1, "zone", kDoNotSchedule, sel("foo"))
                               .spread(1, "node", kDoNotSchedule, sel("foo"));
  const auto fooBar = makePod("p")
                          .label("foo", "")
                          .label("bar", "")
                          .spread(1, "zone", kDoNotSchedule, sel("foo"))
                          .spread(1, "node", kDoNotSchedule, sel("bar"));
  const Nodes ab{zoneNode("node-a", "zone1"), zoneNode("node-b", "zone1")};
  const Nodes ax{zoneNode("node-a", "zone1"), zoneNode("node-x", "zone2")};
  const Nodes abx{zoneNode("node-a", "zone1"), zoneNode("node-b", "zone1"),
                  zoneNode("node-x", "zone2")};
  return {
      {"node a and b both impact current min match",
       nodeOnly,
       fooPod("p-a1", "node-a"),
       ab,
       {},
       "node-a",
       {nodeFoo({{"node-b", 0}, {"node-a", 1}}, {{"node-a", 1}, {"node-b", 0}})}},
      {"only node a impacts current min match",
       nodeOnly,
       fooPod("p-a1", "node-a"),
       ab,
       {fooPod("p-b1", "node-b")},
       "node-a",
       {nodeFoo({{"node-a", 1}, {"node-b", 1}}, {{"node-a", 1}, {"node-b", 1}})}},
      {"add a pod in a different namespace doesn't change topologyKeyToMinPodsMap",
       nodeOnly,
       makePod("p-a1").ns("ns1").node("node-a").label("foo", ""),
       ab,
       {fooPod("p-b1", "node-b")},
       "node-a",
       {nodeFoo({{"node-a", 0}, {"node-b", 1}}, {{"node-a", 0}, {"node-b", 1}})}},
      {"add pod on non-critical node won't trigger re-calculation",
       nodeOnly,
       fooPod("p-b2", "node-b"),
       ab,
       {fooPod("p-b1", "node-b")},
       "node-b",
       {nodeFoo({{"node-a", 0}, {"node-b", 2}}, {{"node-a", 0}, {"node-b", 2}})}},
      {"node a and x both impact topologyKeyToMinPodsMap on zone and node",
       zoneAndNode,
       fooPod("p-a1", "node-a"),
       ax,
       {},
       "node-a",
       {zoneFoo({{"zone2", 0}, {"zone1", 1}}, {{"zone1", 1}, {"zone2", 0}}),
        nodeFoo({{"node-x", 0}, {"node-a", 1}}, {{"node-a", 1}, {"node-x", 0}})}},
      {"only node a impacts topologyKeyToMinPodsMap on zone and node",
       zoneAndNode,
       fooPod("p-a1", "node-a"),
       ax,
       {fooPod("p-x1", "node-x")},
       "node-a",
       {zoneFoo({{"zone1", 1}, {"zone2", 1}}, {{"zone1", 1}, {"zone2", 1}}),
        nodeFoo({{"node-a", 1}, {"node-x", 1}}, {{"node-a", 1}, {"node-x", 1}})}},
      {"node a impacts topologyKeyToMinPodsMap on node and node x on zone",
       zoneAndNode,
       fooPod("p-a1", "node-a"),
       abx,
       {fooPod("p-b1", "node-b"), fooPod("p-b2", "node-b"), fooPod("p-x1", "node-x")},
       "node-a",
       {zoneFoo({{"zone2", 1}, {"zone1", 3}}, {{"zone1", 3}, {"zone2", 1}}),
        nodeFoo({{"node-a", 1}, {"node-x", 1}}, {{"node-a", 1}, {"node-b", 2}, {"node-x", 1}})}},
      {"Constraints hold different labelSelectors and node a impacts the zone",
       fooBar,
       fooPod("p-a1", "node-a"),
       abx,
       {makePod("p-b1").node("node-b").label("foo", "").label("bar", ""),
        makePod("p-x1").node("node-x").label("foo", "").label("bar", ""),
        makePod("p-x2").node("node-x").label("bar", "")},
       "node-a",
       {zoneFoo({{"zone2", 1}, {"zone1", 2}}, {{"zone1", 2}, {"zone2", 1}}),
        {1,
         "node",
         sel("bar"),
         {{"node-a", 0}, {"node-b", 1}},
         {{"node-a", 0}, {"node-b", 1}, {"node-x", 2}}}}},
      {"Constraints hold different labelSelectors and node a impacts both zone and node",
       fooBar,
       makePod("p-a1").node("node-a").label("foo", "").label("bar", ""),
       abx,
       {makePod("p-b1").node("node-b").label("bar", ""),
        makePod("p-x1").node("node-x").label("foo", "").label("bar", ""),
        makePod("p-x2").node("node-x").label("bar", "")},
       "node-a",
       {zoneFoo({{"zone1", 1}, {"zone2", 1}}, {{"zone1", 1}, {"zone2", 1}}),
        {1,
         "node",
         sel("bar"),
         {{"node-a", 1}, {"node-b", 1}},
         {{"node-a", 1}, {"node-b", 1}, {"node-x", 2}}}}},
      // Ours: 1.20 dereferences a missing counter for a node the pod's affinity rules out.
      {"a node outside the pod's node affinity changes nothing",
       makePod("p")
           .label("foo", "")
           .nodeAffinity("node", NodeSelectorOperator::kNotIn, {"node-b"})
           .spread(1, "node", kDoNotSchedule, sel("foo")),
       fooPod("p-b1", "node-b"),
       ab,
       {},
       "node-b",
       {nodeFoo({{"node-a", 0}, {}}, {{"node-a", 0}})}},
  };
}

std::vector<UpdateCase> removePodCases() {
  const auto zoneOnly = makePod("p").label("foo", "").spread(1, "zone", kDoNotSchedule, sel("foo"));
  const Nodes abx{zoneNode("node-a", "zone1"), zoneNode("node-b", "zone1"),
                  zoneNode("node-x", "zone2")};
  const std::vector<PodInfo> abxy{fooPod("p-a1", "node-a"), fooPod("p-b1", "node-b"),
                                  fooPod("p-x1", "node-x"), fooPod("p-y1", "node-y")};
  return {
      {"one spreadConstraint on zone and topologyKeyToMinPodsMap unchanged",
       zoneOnly,
       fooPod("p-a1", "node-a"),
       abx,
       {fooPod("p-a1", "node-a"), fooPod("p-b1", "node-b"), fooPod("p-x1", "node-x")},
       "node-a",
       {zoneFoo({{"zone1", 1}, {"zone2", 1}}, {{"zone1", 1}, {"zone2", 1}})}},
      {"one spreadConstraint on node and topologyKeyToMinPodsMap changed",
       zoneOnly,
       fooPod("p-a1", "node-a"),
       fourNodes(),
       abxy,
       "node-a",
       {zoneFoo({{"zone1", 1}, {"zone2", 2}}, {{"zone1", 1}, {"zone2", 2}})}},
      {"delete an irrelevant pod won't help",
       zoneOnly,
       makePod("p-a0").node("node-a").label("bar", ""),
       fourNodes(),
       {makePod("p-a0").node("node-a").label("bar", ""), fooPod("p-a1", "node-a"),
        fooPod("p-b1", "node-b"), fooPod("p-x1", "node-x"), fooPod("p-y1", "node-y")},
       "node-a",
       {zoneFoo({{"zone1", 2}, {"zone2", 2}}, {{"zone1", 2}, {"zone2", 2}})}},
      {"delete a non-existing pod won't help",
       zoneOnly,
       makePod("p-a0").node("node-a").label("bar", ""),
       fourNodes(),
       abxy,
       "node-a",
       {zoneFoo({{"zone1", 2}, {"zone2", 2}}, {{"zone1", 2}, {"zone2", 2}})}},
      {"two spreadConstraints",
       makePod("p")
           .label("foo", "")
           .spread(1, "zone", kDoNotSchedule, sel("foo"))
           .spread(1, "node", kDoNotSchedule, sel("foo")),
       fooPod("p-x1", "node-x"),
       abx,
       {fooPod("p-a1", "node-a"), fooPod("p-a2", "node-a"), fooPod("p-b1", "node-b"),
        fooPod("p-x1", "node-x"), fooPod("p-x2", "node-x")},
       "node-x",
       {zoneFoo({{"zone2", 1}, {"zone1", 3}}, {{"zone1", 3}, {"zone2", 1}}),
        nodeFoo({{"node-b", 1}, {"node-x", 1}}, {{"node-a", 2}, {"node-b", 1}, {"node-x", 1}})}},
  };
}

TEST_CASE("addPod updates the PreFilter state as kube-scheduler's table",
          "[podtopologyspread][prefilter]") {
  for (const auto& tc : addPodCases()) {
    SECTION(tc.name) {
      FakeHandle handle(tc.nodes, tc.existing);
      PodTopologySpread plugin(listArgs({}), handle);
      CycleState state;
      REQUIRE(plugin.preFilter(state, tc.preemptor).ok());
      REQUIRE(plugin.preFilterExtensions() != nullptr);
      REQUIRE(plugin.preFilterExtensions()
                  ->addPod(state, tc.preemptor, tc.pod, handle.node(tc.node))
                  .ok());
      checkPreFilterState(preFilterState(state), tc.want);
    }
  }
}

TEST_CASE("removePod updates the PreFilter state as kube-scheduler's table",
          "[podtopologyspread][prefilter]") {
  for (const auto& tc : removePodCases()) {
    SECTION(tc.name) {
      FakeHandle handle(tc.nodes, tc.existing);
      PodTopologySpread plugin(listArgs({}), handle);
      CycleState state;
      REQUIRE(plugin.preFilter(state, tc.preemptor).ok());
      REQUIRE(plugin.preFilterExtensions()
                  ->removePod(state, tc.preemptor, tc.pod, handle.node(tc.node))
                  .ok());
      checkPreFilterState(preFilterState(state), tc.want);
    }
  }
}

TEST_CASE("a cloned PreFilter state is updated on its own", "[podtopologyspread][prefilter]") {
  FakeHandle handle({zoneNode("node-a", "zone1"), zoneNode("node-b", "zone1")},
                    {fooPod("p-b1", "node-b")});
  PodTopologySpread plugin(listArgs({}), handle);
  const PodInfo pod = makePod("p").label("foo", "").spread(1, "node", kDoNotSchedule, sel("foo"));
  CycleState state;
  REQUIRE(plugin.preFilter(state, pod).ok());
  CycleState copy = state.clone();
  REQUIRE(plugin.addPod(copy, pod, fooPod("p-a1", "node-a"), handle.node("node-a")).ok());
  checkPreFilterState(preFilterState(copy),
                      {nodeFoo({{"node-a", 1}, {"node-b", 1}}, {{"node-a", 1}, {"node-b", 1}})});
  checkPreFilterState(preFilterState(state),
                      {nodeFoo({{"node-a", 0}, {"node-b", 1}}, {{"node-a", 0}, {"node-b", 1}})});
  // With one pod added node-a still fits (skew 1 + 1 - 1); with a second it does not.
  CHECK(plugin.filter(copy, pod, handle.node("node-a")).ok());
  REQUIRE(plugin.addPod(copy, pod, fooPod("p-a2", "node-a"), handle.node("node-a")).ok());
  CHECK(plugin.filter(copy, pod, handle.node("node-a")).code() == Code::kUnschedulable);
  CHECK(plugin.filter(state, pod, handle.node("node-a")).ok());
}

TEST_CASE("addPod and removePod without PreFilter state fail as upstream",
          "[podtopologyspread][prefilter]") {
  FakeHandle handle({zoneNode("node-a", "zone1")}, {});
  PodTopologySpread plugin(listArgs({}), handle);
  CycleState state;
  const PodInfo pod = makePod("p");
  auto added = plugin.addPod(state, pod, fooPod("q", "node-a"), handle.node("node-a"));
  CHECK(added.code() == Code::kError);
  CHECK(added.message() == "reading \"PreFilterPodTopologySpread\" from cycleState: not found");
  auto removed = plugin.removePod(state, pod, fooPod("q", "node-a"), handle.node("node-a"));
  CHECK(removed.code() == Code::kError);
}

TEST_CASE("addPod on an empty state is a no-op", "[podtopologyspread][prefilter]") {
  FakeHandle handle({zoneNode("node-a", "zone1")}, {});
  PodTopologySpread plugin(listArgs({}), handle);
  CycleState state;
  const PodInfo pod = makePod("p").label("foo", "");
  // Such a pod gets Skip (the framework then calls no AddPod); an empty state, as 1.20 left
  // it, stays empty.
  CHECK(plugin.preFilter(state, pod).isSkip());
  state.write(kPreFilterStateKey, std::make_unique<PreFilterState>());
  REQUIRE(plugin.addPod(state, pod, fooPod("q", "node-a"), handle.node("node-a")).ok());
  CHECK(preFilterState(state).empty());
}

}  // namespace
}  // namespace pts_test

namespace pts_test {
namespace {

TEST_CASE("updates through a caller's copy of a node keep no view of it",
          "[podtopologyspread][prefilter]") {
  auto nodeNamed = [](std::string name) { return makeNode(name, {{"node", name}}); };
  FakeHandle handle({nodeNamed("node-a"), nodeNamed("node-b"), nodeNamed("node-c")},
                    {fooPod("a1", "node-a"), fooPod("b1", "node-b"), fooPod("b2", "node-b"),
                     fooPod("c1", "node-c"), fooPod("c2", "node-c"), fooPod("c3", "node-c")});
  PodTopologySpread plugin(listArgs({}), handle);
  const PodInfo pod = makePod("p").label("foo", "").spread(1, "node", kDoNotSchedule, sel("foo"));
  CycleState state;
  REQUIRE(plugin.preFilter(state, pod).ok());
  {
    // Preemption-style copies: same labels, a Node object that dies before the next update.
    NodeInfo copy;
    copy.node = nodeNamed("node-c");
    REQUIRE(plugin.removePod(state, pod, fooPod("c1", "node-c"), copy).ok());
    REQUIRE(plugin.removePod(state, pod, fooPod("c2", "node-c"), copy).ok());
  }
  // Under ASan a path holding the dead copy's label would fail here.
  REQUIRE(plugin.removePod(state, pod, fooPod("c3", "node-c"), handle.node("node-c")).ok());
  checkPreFilterState(
      preFilterState(state),
      {nodeFoo({{"node-c", 0}, {"node-a", 1}}, {{"node-a", 1}, {"node-b", 2}, {"node-c", 0}})});
  CHECK(plugin.filter(state, pod, handle.node("node-a")).code() == Code::kUnschedulable);
  CHECK(plugin.filter(state, pod, handle.node("node-c")).ok());
}

}  // namespace
}  // namespace pts_test
