// RemovePodsViolatingNodeTaints: its args and which pods it evicts.
#include "plugins/removepodsviolatingnodetaints/node_taints.h"

#include <boost/json.hpp>

#include <catch2/catch.hpp>

#include <string>

#include "args_checks.h"
#include "fake_handle.h"

namespace koord::roles::descheduler::nodetaints {
namespace {

using testkit::FakeHandle;
using testkit::makeNode;
using testkit::makePod;

const auto decode = testkit::textDecoder(decodeRemovePodsViolatingNodeTaintsArgs);

TEST_CASE("NodeTaintsArgs: members, defaults and refusals", "[descheduler]") {
  auto d = decodeRemovePodsViolatingNodeTaintsArgs(nullptr);
  REQUIRE(d.has_value());
  CHECK_FALSE(d->include_prefer_no_schedule);
  CHECK(d->excluded_taints.empty());
  CHECK_FALSE(d->included_taints);

  auto a = decode(R"({"includePreferNoSchedule": true, "excludedTaints": ["k", "k2=v"],
                      "labelSelector": {"matchLabels": {"app": "web"}}})");
  REQUIRE(a.has_value());
  CHECK(a->include_prefer_no_schedule);
  CHECK(a->excluded_taints == std::vector<std::string>{"k", "k2=v"});
  auto empty_included = decode(R"({"includedTaints": []})");
  REQUIRE(empty_included.has_value());
  REQUIRE(empty_included->included_taints);
  CHECK(empty_included->included_taints->empty());

  const testkit::Refusal cases[] = {
      {R"({"includedTaints": ["a"], "excludedTaints": ["b"]})", "includedTaints"},
      {R"({"includePreferNoSchedule": "yes"})", "includePreferNoSchedule"},
      {R"({"excludedTaints": [1]})", "excludedTaints[0]"},
      {R"({"taints": []})", "unknown field \"taints\""},
      {R"({"namespaces": {"include": ["a"], "exclude": ["b"]}})", "namespaces"},
  };
  testkit::checkRefusals(decodeRemovePodsViolatingNodeTaintsArgs, cases);
}

TEST_CASE("NodeTaints: pods not tolerating the taints that count are evicted", "[descheduler]") {
  using E = kube::TaintEffect;
  struct Case {
    const char* name;
    const char* args;
    kube::Taint taint;
    bool tolerated;
    bool evicted;
  };
  const Case cases[] = {
      {"NoSchedule not tolerated", "{}", {"k", "v", E::kNoSchedule}, false, true},
      {"NoSchedule tolerated", "{}", {"k", "v", E::kNoSchedule}, true, false},
      {"NoExecute is the kubelet's", "{}", {"k", "v", E::kNoExecute}, false, false},
      {"PreferNoSchedule ignored by default", "{}", {"k", "v", E::kPreferNoSchedule}, false, false},
      {"PreferNoSchedule when asked",
       R"({"includePreferNoSchedule": true})",
       {"k", "v", E::kPreferNoSchedule},
       false,
       true},
      {"excluded by key", R"({"excludedTaints": ["k"]})", {"k", "v", E::kNoSchedule}, false, false},
      {"excluded by key=value",
       R"({"excludedTaints": ["k=v"]})",
       {"k", "v", E::kNoSchedule},
       false,
       false},
      {"other value not excluded",
       R"({"excludedTaints": ["k=w"]})",
       {"k", "v", E::kNoSchedule},
       false,
       true},
      {"included by key", R"({"includedTaints": ["k"]})", {"k", "v", E::kNoSchedule}, false, true},
      {"not included",
       R"({"includedTaints": ["other"]})",
       {"k", "v", E::kNoSchedule},
       false,
       false},
      {"empty included list includes nothing",
       R"({"includedTaints": []})",
       {"k", "v", E::kNoSchedule},
       false,
       false},
      {"namespace excluded",
       R"({"namespaces": {"exclude": ["default"]}})",
       {"k", "v", E::kNoSchedule},
       false,
       false},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    auto args = decode(c.args);
    REQUIRE(args.has_value());
    FakeHandle h;
    auto n = makeNode("n1");
    n->taints = {c.taint};
    h.snap.addNode(n);
    auto p = makePod("p", "n1");
    if (c.tolerated)
      p->tolerations = {{"k", kube::TolerationOperator::kExists, "", kube::TaintEffect::kAll, {}}};
    h.snap.addPod(p);
    auto plugin = makeRemovePodsViolatingNodeTaints(
        std::make_shared<RemovePodsViolatingNodeTaintsArgs>(*args), h);
    REQUIRE(plugin.has_value());
    REQUIRE(dynamic_cast<DeschedulePlugin&>(**plugin).deschedule(h.nodes()).has_value());
    CHECK(h.evicted.size() == (c.evicted ? 1u : 0u));
  }
}

TEST_CASE("NodeTaints: the evictor's filter and the per-node cap are obeyed", "[descheduler]") {
  FakeHandle h;
  auto n = makeNode("n1");
  n->taints = {{"k", "", kube::TaintEffect::kNoSchedule}};
  h.snap.addNode(n);
  for (const char* name : {"p1", "p2", "p3"})
    h.snap.addPod(makePod(name, "n1"));
  h.filter_fn = [](const Pod& p) { return p.name != "p1"; };
  h.max_per_node = 1;
  auto plugin =
      makeRemovePodsViolatingNodeTaints(std::make_shared<RemovePodsViolatingNodeTaintsArgs>(), h);
  REQUIRE(plugin.has_value());
  REQUIRE(dynamic_cast<DeschedulePlugin&>(**plugin).deschedule(h.nodes()).has_value());
  CHECK(h.evicted == std::vector<std::string>{"default/p2"});
  CHECK(h.options.at(0).plugin_name == kRemovePodsViolatingNodeTaintsName);
}

}  // namespace
}  // namespace koord::roles::descheduler::nodetaints
