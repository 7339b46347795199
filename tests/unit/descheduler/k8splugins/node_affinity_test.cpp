// RemovePodsViolatingNodeAffinity: its args and which pods it evicts.
#include "plugins/removepodsviolatingnodeaffinity/node_affinity.h"

#include <boost/json.hpp>

#include <catch2/catch.hpp>

#include <string>

#include "args_checks.h"
#include "fake_handle.h"

namespace koord::roles::descheduler::nodeaffinity {
namespace {

using testkit::FakeHandle;
using testkit::makeNode;
using testkit::makePod;

const auto decode = testkit::textDecoder(decodeRemovePodsViolatingNodeAffinityArgs);

kube::NodeSelectorTerm zoneIs(std::string zone) {
  return {{{"zone", kube::NodeSelectorOperator::kIn, {std::move(zone)}}}, {}};
}

TEST_CASE("NodeAffinityArgs: types are read, unknown or missing ones refused", "[descheduler]") {
  auto a = decode(R"({"nodeAffinityType": ["requiredDuringSchedulingIgnoredDuringExecution",
                      "preferredDuringSchedulingIgnoredDuringExecution"],
                      "namespaces": {"exclude": ["kube-system"]}})");
  REQUIRE(a.has_value());
  CHECK(a->node_affinity_type ==
        std::vector<NodeAffinityType>{NodeAffinityType::kRequired, NodeAffinityType::kPreferred});
  REQUIRE(a->common.namespaces);
  CHECK(a->common.namespaces->exclude == std::vector<std::string>{"kube-system"});

  const testkit::Refusal cases[] = {
      {"{}", "nodeAffinityType needs to be set"},
      {R"({"nodeAffinityType": []})", "nodeAffinityType needs to be set"},
      {R"({"nodeAffinityType": ["sometimes"]})", "nodeAffinityType[0]"},
      {R"({"nodeAffinityType": "requiredDuringSchedulingIgnoredDuringExecution"})",
       "nodeAffinityType"},
      {R"({"nodeAffinityType": ["requiredDuringSchedulingIgnoredDuringExecution"], "x": 1})",
       "unknown field \"x\""},
  };
  testkit::checkRefusals(decodeRemovePodsViolatingNodeAffinityArgs, cases);
  CHECK_FALSE(decodeRemovePodsViolatingNodeAffinityArgs(nullptr).has_value());
}

struct Fixture {
  FakeHandle h;
  Fixture() {
    auto a = makeNode("a");
    a->labels["zone"] = "a";
    auto b = makeNode("b");
    b->labels["zone"] = "b";
    h.snap.addNode(a);
    h.snap.addNode(b);
  }
  std::vector<std::string> run(std::vector<NodeAffinityType> types) {
    auto args = std::make_shared<RemovePodsViolatingNodeAffinityArgs>();
    args->node_affinity_type = std::move(types);
    auto p = makeRemovePodsViolatingNodeAffinity(args, h);
    REQUIRE(p.has_value());
    auto* plugin = dynamic_cast<DeschedulePlugin*>(p->get());
    REQUIRE(plugin != nullptr);
    REQUIRE(plugin->deschedule(h.nodes()).has_value());
    return h.evicted;
  }
};

TEST_CASE("NodeAffinity: required affinity no longer met is evicted when another node fits",
          "[descheduler]") {
  struct Case {
    const char* name;
    const char* wants_zone;
    std::int64_t cpu;
    bool evicted;
  };
  const Case cases[] = {
      {"violated, b fits", "b", 100, true},
      {"still met", "a", 100, false},
      {"violated, nowhere to go", "b", 64000, false},
      {"violated, no node matches", "c", 100, false},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    Fixture f;
    auto p = makePod("p", "a", c.cpu);
    p->node_affinity = kube::NodeAffinity{kube::NodeSelector{{zoneIs(c.wants_zone)}}, {}};
    f.h.snap.addPod(p);
    f.h.snap.addPod(makePod("plain", "a"));
    auto evicted = f.run({NodeAffinityType::kRequired});
    CHECK(evicted ==
          (c.evicted ? std::vector<std::string>{"default/p"} : std::vector<std::string>{}));
    if (c.evicted) {
      CHECK(f.h.options[0].plugin_name == kRemovePodsViolatingNodeAffinityName);
      CHECK_FALSE(f.h.options[0].reason.empty());
    }
  }
}

TEST_CASE("NodeAffinity: preferred affinity moves a pod to a node scoring higher",
          "[descheduler]") {
  struct Case {
    const char* name;
    const char* prefers;
    bool evicted;
  };
  const Case cases[] = {
      {"b scores higher", "b", true},
      {"own node scores highest", "a", false},
      {"no node scores", "c", false},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    Fixture f;
    auto p = makePod("p", "a");
    p->node_affinity = kube::NodeAffinity{std::nullopt, {{10, zoneIs(c.prefers)}}};
    f.h.snap.addPod(p);
    CHECK(f.run({NodeAffinityType::kPreferred}).size() == (c.evicted ? 1u : 0u));
    // Required alone leaves a pod with only preferred terms where it is.
    Fixture g;
    g.h.snap.addPod(p);
    CHECK(g.run({NodeAffinityType::kRequired}).empty());
  }
}

TEST_CASE("NodeAffinity: the evictor's filter, the args' filter and the caps are obeyed",
          "[descheduler]") {
  auto violating = [](std::string name, std::string ns = "default") {
    auto p = makePod(std::move(name), "a", 100, 1, "rs", std::move(ns));
    p->node_affinity = kube::NodeAffinity{kube::NodeSelector{{zoneIs("b")}}, {}};
    return p;
  };
  Fixture kept;
  kept.h.snap.addPod(violating("p"));
  kept.h.filter_fn = [](const Pod&) { return false; };
  CHECK(kept.run({NodeAffinityType::kRequired}).empty());

  Fixture capped;
  capped.h.snap.addPod(violating("p1"));
  capped.h.snap.addPod(violating("p2"));
  capped.h.max_per_node = 1;
  CHECK(capped.run({NodeAffinityType::kRequired}) == std::vector<std::string>{"default/p1"});

  Fixture both;
  both.h.snap.addPod(violating("p"));
  // Evicted once, even when both types are asked for.
  CHECK(both.run({NodeAffinityType::kRequired, NodeAffinityType::kRequired}).size() == 1);

  Fixture ns;
  ns.h.snap.addPod(violating("p", "other"));
  auto args = std::make_shared<RemovePodsViolatingNodeAffinityArgs>();
  args->node_affinity_type = {NodeAffinityType::kRequired};
  args->common.namespaces = podfilter::Namespaces{{"default"}, {}};
  auto plugin = makeRemovePodsViolatingNodeAffinity(args, ns.h);
  REQUIRE(plugin.has_value());
  REQUIRE(dynamic_cast<DeschedulePlugin&>(**plugin).deschedule(ns.h.nodes()).has_value());
  CHECK(ns.h.evicted.empty());
}

}  // namespace
}  // namespace koord::roles::descheduler::nodeaffinity
