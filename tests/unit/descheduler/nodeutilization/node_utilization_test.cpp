// LowNodeUtilization and HighNodeUtilization over a FakeHandle, usage being pod requests.
#include "plugins/nodeutilization/node_utilization.h"

#include <boost/json.hpp>

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "args_checks.h"
#include "fake_handle.h"
#include "plugins/nodeutilization/register.h"
#include "registry_checks.h"

namespace koord::roles::descheduler::nodeutilization {
namespace {

constexpr std::int64_t kCpu = 10000;

struct PodReq {
  std::string name;
  std::int64_t cpu;
  std::optional<std::int32_t> priority = std::nullopt;
};

struct Cluster {
  testkit::FakeHandle h;

  Node& node(const std::string& name, const std::vector<PodReq>& pods) {
    auto n = testkit::makeNode(name, kCpu, std::int64_t{64} << 30);
    h.snap.addNode(n);
    for (const auto& r : pods) {
      auto p = testkit::makePod(r.name, name, r.cpu, 1 << 20);
      p->priority = r.priority;
      h.snap.addPod(p);
    }
    return *n;
  }

  // One pass of PluginT with the args `decode` makes of `json`; the pods evicted so far.
  template <typename PluginT, typename Decode>
  std::vector<std::string> run(Decode decode, std::string_view json) {
    auto a = testkit::decodeText(decode, json);
    REQUIRE(a.has_value());
    PluginT p(std::make_shared<const typename decltype(a)::value_type>(std::move(*a)), h);
    REQUIRE(p.balance(h.nodes()).has_value());
    return h.evicted;
  }
  std::vector<std::string> low(std::string_view json) {
    return run<LowNodeUtilization>(decodeLowNodeUtilizationArgs, json);
  }
  std::vector<std::string> high(std::string_view json) {
    return run<HighNodeUtilization>(decodeHighNodeUtilizationArgs, json);
  }
};

constexpr std::string_view kLow = R"({"thresholds": {"cpu": 20}, "targetThresholds": {"cpu": 70}})";

TEST_CASE("LowNodeUtilization: lowest priority first until the node is under target",
          "[descheduler]") {
  Cluster c;
  // 90% requested: the pod without a priority goes first, then priority 0; at 50% it is under 70%
  // and stops.
  c.node("full", {{"p1", 5000, 100}, {"p2", 2500, 0}, {"p3", 1500}});
  c.node("empty", {{"x", 1000}});
  auto evicted = c.low(kLow);
  CHECK(evicted == std::vector<std::string>{"default/p3", "default/p2"});
  REQUIRE_FALSE(c.h.options.empty());
  CHECK(c.h.options[0].plugin_name == "LowNodeUtilization");
  CHECK_THAT(c.h.options[0].reason, Catch::Contains("full") && Catch::Contains("cpu 90.00%"));
}

TEST_CASE("LowNodeUtilization: when balancing is not worth it nothing moves", "[descheduler]") {
  struct Case {
    const char* name;
    std::vector<std::int64_t> cpu;
    const char* args;
    bool unschedulable_low = false;
  };
  const Case cases[] = {
      {"no low node", {9000, 5000}, nullptr},
      {"no high node", {6000, 1000}, nullptr},
      {"every node low", {1000, 1000}, nullptr},
      {"low nodes not above numberOfNodes",
       {9000, 1000},
       R"({"thresholds": {"cpu": 20}, "targetThresholds": {"cpu": 70}, "numberOfNodes": 1})"},
      {"the only low node is unschedulable", {9000, 1000}, nullptr, true},
  };
  for (const auto& k : cases) {
    CAPTURE(k.name);
    Cluster c;
    for (std::size_t i = 0; i < k.cpu.size(); ++i) {
      Node& n = c.node("n" + std::to_string(i), {{"p" + std::to_string(i), k.cpu[i]}});
      n.unschedulable = k.unschedulable_low && i == 1;
    }
    CHECK(c.low(k.args ? k.args : kLow).empty());
  }
}

TEST_CASE("LowNodeUtilization: caps, headroom and the pre-eviction filter", "[descheduler]") {
  SECTION("per-node cap") {
    Cluster c;
    c.h.max_per_node = 1;
    c.node("full", {{"p1", 5000, 100}, {"p2", 2500, 0}, {"p3", 1500}});
    c.node("empty", {{"x", 1000}});
    CHECK(c.low(kLow) == std::vector<std::string>{"default/p3"});
  }
  SECTION("headroom of the low nodes") {
    Cluster c;
    // empty has 0.5 cores under 70%: one pod uses it up.
    c.node("full", {{"p1", 3000}, {"p2", 3000}, {"p3", 3000}});
    c.node("empty", {{"x", 6500}});
    CHECK(c.low(R"({"thresholds": {"cpu": 65}, "targetThresholds": {"cpu": 70}})").size() == 1);
  }
  SECTION("pre-eviction filter and excluded namespaces") {
    Cluster c;
    c.h.pre_eviction_fn = [](const Pod& p) { return p.name != "p3"; };
    c.node("full", {{"p1", 5000, 100}, {"p2", 2500, 0}, {"p3", 1500}});
    c.node("empty", {{"x", 1000}});
    CHECK(c.low(kLow) == std::vector<std::string>{"default/p2"});
    Cluster d;
    d.node("full", {{"p1", 5000, 100}, {"p2", 4000, 0}});
    d.node("empty", {{"x", 1000}});
    CHECK(d.low(R"({"thresholds": {"cpu": 20}, "targetThresholds": {"cpu": 70},
                    "evictableNamespaces": {"exclude": ["default"]}})")
              .empty());
  }
  SECTION("deviation thresholds") {
    Cluster c;
    c.node("a", {{"a", 2000}});
    c.node("b", {{"b", 5000}});
    c.node("c", {{"c", 8000}});
    CHECK(c.low(R"({"useDeviationThresholds": true, "thresholds": {"cpu": 10},
                    "targetThresholds": {"cpu": 10}})") == std::vector<std::string>{"default/c"});
  }
}

TEST_CASE("HighNodeUtilization: empties the least used node onto the fuller ones",
          "[descheduler]") {
  Cluster c;
  c.node("sparse", {{"s1", 500, 10}, {"s2", 500}});
  c.node("busy", {{"b", 5000}});
  c.node("busier", {{"c", 6000}});
  auto evicted = c.high(R"({"thresholds": {"cpu": 20}})");
  CHECK(evicted == std::vector<std::string>{"default/s2", "default/s1"});
  REQUIRE_FALSE(c.h.options.empty());
  CHECK(c.h.options[0].plugin_name == "HighNodeUtilization");
}

TEST_CASE("HighNodeUtilization: nothing moves without a schedulable target or with all low",
          "[descheduler]") {
  SECTION("all nodes under the thresholds") {
    Cluster c;
    c.node("a", {{"a", 500}});
    c.node("b", {{"b", 500}});
    CHECK(c.high(R"({"thresholds": {"cpu": 20}})").empty());
  }
  SECTION("the only fuller node is unschedulable") {
    Cluster c;
    c.node("a", {{"a", 500}});
    c.node("b", {{"b", 5000}}).unschedulable = true;
    CHECK(c.high(R"({"thresholds": {"cpu": 20}})").empty());
  }
  SECTION("numberOfNodes") {
    Cluster c;
    c.node("a", {{"a", 500}});
    c.node("b", {{"b", 5000}});
    CHECK(c.high(R"({"thresholds": {"cpu": 20}, "numberOfNodes": 1})").empty());
  }
}

TEST_CASE("Node utilization: the registry entries decode and build", "[descheduler]") {
  // The thresholds have no default.
  testkit::checkNeedsArgs<BalancePlugin>(
      testkit::registeredEntry(registerLowNodeUtilization, "LowNodeUtilization"),
      R"({"thresholds": {"cpu": 20}, "targetThresholds": {"cpu": 70}})", "LowNodeUtilization");
  testkit::checkNeedsArgs<BalancePlugin>(
      testkit::registeredEntry(registerHighNodeUtilization, "HighNodeUtilization"),
      R"({"thresholds": {"cpu": 20}})", "HighNodeUtilization");
}

}  // namespace
}  // namespace koord::roles::descheduler::nodeutilization
