// kube-scheduler 1.20's TestSingleConstraint, TestMultipleConstraints and TestPreFilterDisabled,
// with the reasons checked too, plus the fast path for pods without constraints.
#include <catch2/catch.hpp>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "fixtures.h"
#include "state_check.h"

namespace pts_test {
namespace {

using koord::kube::NodeSelectorOperator;
using koord::roles::scheduler::upstream::kErrReasonConstraintsNotMatch;
using koord::roles::scheduler::upstream::kErrReasonNodeLabelNotMatch;

using Nodes = std::vector<std::shared_ptr<const Node>>;

PodInfo fooPod(std::string name, std::string node) {
  return makePod(std::move(name)).node(std::move(node)).label("foo", "");
}

PodInfo barPod(std::string name, std::string node) {
  return makePod(std::move(name)).node(std::move(node)).label("bar", "");
}

PodInfo fooBarPod(std::string name, std::string node) {
  return makePod(std::move(name)).node(std::move(node)).label("foo", "").label("bar", "");
}

Nodes fourNodes() {
  return {zoneNode("node-a", "zone1"), zoneNode("node-b", "zone1"), zoneNode("node-x", "zone2"),
          zoneNode("node-y", "zone2")};
}

/// 2/1/0/3 matching pods on node-a/b/x/y.
std::vector<PodInfo> spread2103() {
  return {fooPod("p-a1", "node-a"), fooPod("p-a2", "node-a"), fooPod("p-b1", "node-b"),
          fooPod("p-y1", "node-y"), fooPod("p-y2", "node-y"), fooPod("p-y3", "node-y")};
}

constexpr Code kOk = Code::kSuccess;
constexpr Code kNo = Code::kUnschedulable;
constexpr Code kNever = Code::kUnschedulableAndUnresolvable;

struct FilterCase {
  std::string name;
  PodInfo pod;
  Nodes nodes;
  std::vector<PodInfo> existing;
  std::map<std::string, Code> want;
};

void runFilterCase(const FilterCase& tc) {
  FakeHandle handle(tc.nodes, tc.existing);
  PodTopologySpread plugin(listArgs({}), handle);
  CycleState state;
  const Status pre = plugin.preFilter(state, tc.pod);
  // Skip (no DoNotSchedule constraints): the framework passes every node without Filter.
  REQUIRE((pre.ok() || pre.isSkip()));
  for (const auto& n : tc.nodes) {
    INFO("node " << n->name);
    const Status st =
        pre.isSkip() ? Status::success() : plugin.filter(state, tc.pod, handle.node(n->name));
    const Code want = tc.want.at(n->name);
    CHECK(st.code() == want);
    if (want == kNo) {
      CHECK(st.reasons() == std::vector<std::string>{std::string(kErrReasonConstraintsNotMatch)});
    } else if (want == kNever) {
      CHECK(st.reasons() == std::vector<std::string>{std::string(kErrReasonNodeLabelNotMatch)});
    }
  }
}

std::vector<FilterCase> singleConstraintCases() {
  const auto zoneFoo = makePod("p").label("foo", "").spread(1, "zone", kDoNotSchedule, sel("foo"));
  const auto nodeFoo = makePod("p").label("foo", "").spread(1, "node", kDoNotSchedule, sel("foo"));
  return {
      {"no existing pods",
       zoneFoo,
       fourNodes(),
       {},
       {{"node-a", kOk}, {"node-b", kOk}, {"node-x", kOk}, {"node-y", kOk}}},
      {"no existing pods and incoming pod doesn't match itself",
       makePod("p").label("foo", "").spread(1, "zone", kDoNotSchedule, sel("bar")),
       fourNodes(),
       {},
       {{"node-a", kOk}, {"node-b", kOk}, {"node-x", kOk}, {"node-y", kOk}}},
      {"existing pods in a different namespace do not count",
       zoneFoo,
       fourNodes(),
       {makePod("p-a1").ns("ns1").node("node-a").label("foo", ""),
        makePod("p-b1").ns("ns2").node("node-a").label("foo", ""), fooPod("p-x1", "node-x"),
        fooPod("p-y1", "node-y")},
       {{"node-a", kOk}, {"node-b", kOk}, {"node-x", kNo}, {"node-y", kNo}}},
      {"pods spread across zones as 3/3 and all nodes fit",
       zoneFoo,
       fourNodes(),
       spread2103(),
       {{"node-a", kOk}, {"node-b", kOk}, {"node-x", kOk}, {"node-y", kOk}}},
      {"pods spread across zones as 1/2 due to absence of label 'zone' on node-b",
       zoneFoo,
       {zoneNode("node-a", "zone1"), makeNode("node-b", {{"zon", "zone1"}, {"node", "node-b"}}),
        zoneNode("node-x", "zone2"), zoneNode("node-y", "zone2")},
       {fooPod("p-a1", "node-a"), fooPod("p-b1", "node-b"), fooPod("p-x1", "node-x"),
        fooPod("p-y1", "node-y")},
       {{"node-a", kOk}, {"node-b", kNever}, {"node-x", kNo}, {"node-y", kNo}}},
      {"pod cannot be scheduled as all nodes don't have label 'rack'",
       makePod("p").label("foo", "").spread(1, "rack", kDoNotSchedule, sel("foo")),
       {zoneNode("node-a", "zone1"), zoneNode("node-x", "zone2")},
       {},
       {{"node-a", kNever}, {"node-x", kNever}}},
      {"pods spread across nodes as 2/1/0/3 and only node-x fits",
       nodeFoo,
       fourNodes(),
       spread2103(),
       {{"node-a", kNo}, {"node-b", kNo}, {"node-x", kOk}, {"node-y", kNo}}},
      {"pods spread across nodes as 2/1/0/3 and maxSkew is 2 so node-b and node-x fit",
       makePod("p").label("foo", "").spread(2, "node", kDoNotSchedule, sel("foo")),
       fourNodes(),
       spread2103(),
       {{"node-a", kNo}, {"node-b", kOk}, {"node-x", kOk}, {"node-y", kNo}}},
      {"pods spread across nodes as 2/1/0/3 but pod doesn't match itself",
       makePod("p").label("bar", "").spread(1, "node", kDoNotSchedule, sel("foo")),
       fourNodes(),
       spread2103(),
       {{"node-a", kNo}, {"node-b", kOk}, {"node-x", kOk}, {"node-y", kNo}}},
      // Only node-a and node-y are counted; node-b and node-x pass here since NodeAffinity,
      // not this plugin, turns them down.
      {"incoming pod has nodeAffinity and pods spread as 2/~1~/~0~/3 hence node-a fits",
       makePod("p")
           .label("foo", "")
           .nodeAffinity("node", NodeSelectorOperator::kIn, {"node-a", "node-y"})
           .spread(1, "node", kDoNotSchedule, sel("foo")),
       fourNodes(),
       spread2103(),
       {{"node-a", kOk}, {"node-b", kOk}, {"node-x", kOk}, {"node-y", kNo}}},
      {"terminating Pods should be excluded",
       nodeFoo,
       {makeNode("node-a", {{"node", "node-a"}}), makeNode("node-b", {{"node", "node-b"}})},
       {makePod("p-a").node("node-a").label("foo", "").terminating(), fooPod("p-b", "node-b")},
       {{"node-a", kOk}, {"node-b", kNo}}},
  };
}

std::vector<FilterCase> multipleConstraintCases() {
  const auto zoneNodeFoo = makePod("p")
                               .label("foo", "")
                               .spread(1, "zone", kDoNotSchedule, sel("foo"))
                               .spread(1, "node", kDoNotSchedule, sel("foo"));
  const auto fooZoneBarNode = makePod("p")
                                  .label("foo", "")
                                  .label("bar", "")
                                  .spread(1, "zone", kDoNotSchedule, sel("foo"))
                                  .spread(1, "node", kDoNotSchedule, sel("bar"));
  auto spread2104 = spread2103();
  spread2104.push_back(fooPod("p-y4", "node-y"));
  return {
      {"two Constraints on zone and node with spreads = [3/3 2/1/0/3]",
       zoneNodeFoo,
       fourNodes(),
       spread2103(),
       {{"node-a", kNo}, {"node-b", kNo}, {"node-x", kOk}, {"node-y", kNo}}},
      {"two Constraints on zone and node with spreads = [3/4 2/1/0/4]",
       zoneNodeFoo,
       fourNodes(),
       spread2104,
       {{"node-a", kNo}, {"node-b", kNo}, {"node-x", kNo}, {"node-y", kNo}}},
      {"Constraints hold different labelSelectors with spreads = [1/0 1/0/0/1]",
       fooZoneBarNode,
       fourNodes(),
       {fooPod("p-a1", "node-a"), barPod("p-y1", "node-y")},
       {{"node-a", kNo}, {"node-b", kNo}, {"node-x", kOk}, {"node-y", kNo}}},
      {"Constraints hold different labelSelectors with spreads = [1/0 0/0/1/1]",
       fooZoneBarNode,
       fourNodes(),
       {fooPod("p-a1", "node-a"), barPod("p-x1", "node-x"), barPod("p-y1", "node-y")},
       {{"node-a", kNo}, {"node-b", kNo}, {"node-x", kNo}, {"node-y", kNo}}},
      {"Constraints hold different labelSelectors with spreads = [2/3 1/0/0/1]",
       fooZoneBarNode,
       fourNodes(),
       {fooPod("p-a1", "node-a"), fooBarPod("p-a2", "node-a"), fooPod("p-y1", "node-y"),
        fooBarPod("p-y2", "node-y"), fooPod("p-y3", "node-y")},
       {{"node-a", kNo}, {"node-b", kOk}, {"node-x", kNo}, {"node-y", kNo}}},
      {"Constraints hold different labelSelectors but pod doesn't match itself on 'zone'",
       makePod("p")
           .label("bar", "")
           .spread(1, "zone", kDoNotSchedule, sel("foo"))
           .spread(1, "node", kDoNotSchedule, sel("bar")),
       fourNodes(),
       {fooPod("p-a1", "node-a"), barPod("p-x1", "node-x"), barPod("p-y1", "node-y")},
       {{"node-a", kOk}, {"node-b", kOk}, {"node-x", kNo}, {"node-y", kNo}}},
      {"two Constraints on zone and node with absence of label 'node' on node-x",
       zoneNodeFoo,
       {zoneNode("node-a", "zone1"), zoneNode("node-b", "zone1"),
        makeNode("node-x", {{"zone", "zone2"}}), zoneNode("node-y", "zone2")},
       {fooPod("p-a1", "node-a"), fooPod("p-y3", "node-y")},
       {{"node-a", kNo}, {"node-b", kOk}, {"node-x", kNever}, {"node-y", kNo}}},
  };
}

TEST_CASE("Filter with a single constraint as kube-scheduler's table",
          "[podtopologyspread][filter]") {
  for (const auto& tc : singleConstraintCases()) {
    SECTION(tc.name) {
      runFilterCase(tc);
    }
  }
}

TEST_CASE("Filter with multiple constraints as kube-scheduler's table",
          "[podtopologyspread][filter]") {
  for (const auto& tc : multipleConstraintCases()) {
    SECTION(tc.name) {
      runFilterCase(tc);
    }
  }
}

TEST_CASE("Filter without PreFilter state is an error", "[podtopologyspread][filter]") {
  FakeHandle handle({zoneNode("node-a", "zone1")}, {});
  PodTopologySpread plugin(listArgs({}), handle);
  CycleState state;
  const Status st = plugin.filter(state, makePod("p"), handle.node("node-a"));
  CHECK(st.code() == Code::kError);
  CHECK(st.message() == "reading \"PreFilterPodTopologySpread\" from cycleState: not found");
}

TEST_CASE("Filter on a NodeInfo without its Node is an error", "[podtopologyspread][filter]") {
  FakeHandle handle({zoneNode("node-a", "zone1")}, {});
  PodTopologySpread plugin(listArgs({}), handle);
  CycleState state;
  const PodInfo pod = makePod("p").label("foo", "").spread(1, "zone", kDoNotSchedule, sel("foo"));
  REQUIRE(plugin.preFilter(state, pod).ok());
  const Status st = plugin.filter(state, pod, NodeInfo{});
  CHECK(st.code() == Code::kError);
  CHECK(st.message() == "node not found");
}

TEST_CASE("pods without DoNotSchedule constraints get Skip at PreFilter",
          "[podtopologyspread][filter]") {
  // Every node lacks the "zone" key; with a hard zone constraint they would all be rejected.
  // Without one Filter would pass every node, so PreFilter answers Skip and writes no state.
  FakeHandle handle({makeNode("node-a", {}), makeNode("node-b", {})}, {fooPod("q", "node-a")});
  SECTION("no constraints") {
    PodTopologySpread plugin(listArgs({}), handle);
    CycleState state;
    const PodInfo pod = makePod("p").label("foo", "");
    CHECK(plugin.preFilter(state, pod).isSkip());
    CHECK(state.read<PreFilterState>(kPreFilterStateKey) == nullptr);
  }
  SECTION("only ScheduleAnyway constraints") {
    PodTopologySpread plugin(listArgs({}), handle);
    CycleState state;
    const PodInfo pod =
        makePod("p").label("foo", "").spread(1, "zone", kScheduleAnyway, sel("foo"));
    CHECK(plugin.preFilter(state, pod).isSkip());
    CHECK(state.read<PreFilterState>(kPreFilterStateKey) == nullptr);
  }
  SECTION("hard default constraints but nothing selects the pod") {
    addSpreadingObjects(handle, {.services = {spreadObject("svc", "foo=bar")}});
    PodTopologySpread plugin(listArgs({{1, "zone", kDoNotSchedule}}), handle);
    CycleState state;
    const PodInfo pod = makePod("p").label("foo", "");
    CHECK(plugin.preFilter(state, pod).isSkip());
    CHECK(state.read<PreFilterState>(kPreFilterStateKey) == nullptr);
  }
  SECTION("an empty state (Skip's equivalent in 1.20) passes every node") {
    PodTopologySpread plugin(listArgs({}), handle);
    CycleState state;
    state.write(kPreFilterStateKey, std::make_unique<PreFilterState>());
    const PodInfo pod = makePod("p").label("foo", "");
    CHECK(plugin.filter(state, pod, handle.node("node-a")).ok());
    CHECK(plugin.filter(state, pod, handle.node("node-b")).ok());
  }
  SECTION("hard default constraints without the spreading sources apply none") {
    PodTopologySpread plugin(listArgs({{1, "zone", kDoNotSchedule}}), handle);
    CycleState state;
    const PodInfo pod = makePod("p").label("foo", "bar");
    CHECK(plugin.preFilter(state, pod).isSkip());
  }
  SECTION("hard default constraints and a service do filter") {
    addSpreadingObjects(handle, {.services = {spreadObject("svc", "foo=bar")}});
    PodTopologySpread plugin(listArgs({{1, "zone", kDoNotSchedule}}), handle);
    CycleState state;
    const PodInfo pod = makePod("p").label("foo", "bar");
    REQUIRE(plugin.preFilter(state, pod).ok());
    CHECK_FALSE(preFilterState(state).empty());
    CHECK(plugin.filter(state, pod, handle.node("node-a")).code() == kNever);
  }
}

TEST_CASE("default constraints spread the pods of the pod's services and controllers",
          "[podtopologyspread][filter]") {
  auto web = [](std::string name) {
    return makePod(std::move(name)).label("app", "web").label("tier", "front");
  };
  FakeHandle handle(fourNodes(),
                    {web("w-1").node("node-a"), web("w-2").node("node-x"),
                     makePod("o-1").node("node-b").label("app", "api").label("tier", "front"),
                     makePod("o-2").node("node-b").label("app", "web").label("tier", "back")});
  // The Service selects every front-end pod, the StatefulSet only web's: together web's.
  addSpreadingObjects(handle, {.services = {spreadObject("front", "tier=front")},
                               .stateful_sets = {spreadObject("web", "app=web")}});
  PodTopologySpread plugin(listArgs({{1, "node", kDoNotSchedule}}), handle);
  CycleState state;
  const PodInfo pod = web("w-3");
  REQUIRE(plugin.preFilter(state, pod).ok());
  // web pods spread 1/0/1/0: the pods on node-b match only one of the two selectors.
  CHECK(plugin.filter(state, pod, handle.node("node-a")).code() == kNo);
  CHECK(plugin.filter(state, pod, handle.node("node-b")).ok());
  CHECK(plugin.filter(state, pod, handle.node("node-x")).code() == kNo);
  CHECK(plugin.filter(state, pod, handle.node("node-y")).ok());
}

}  // namespace
}  // namespace pts_test
