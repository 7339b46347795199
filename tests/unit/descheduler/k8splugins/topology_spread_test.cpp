// RemovePodsViolatingTopologySpreadConstraint: its args, the domain balancing and nodeFit.
#include "plugins/removepodsviolatingtopologyspreadconstraint/topology_spread.h"

#include <boost/json.hpp>

#include <catch2/catch.hpp>

#include <string>

#include "fake_handle.h"
#include "plugins/removepodsviolatingtopologyspreadconstraint/balance_domains.h"

namespace koord::roles::descheduler::topologyspread {
namespace {

using testkit::FakeHandle;
using testkit::makeNode;
using testkit::makePod;
using UCA = UnsatisfiableConstraintAction;

Expected<RemovePodsViolatingTopologySpreadConstraintArgs> decode(std::string_view text) {
  const boost::json::value v = boost::json::parse(text);
  return decodeRemovePodsViolatingTopologySpreadConstraintArgs(&v);
}

TEST_CASE("TopologySpreadArgs: defaults, both spellings of soft constraints, refusals",
          "[descheduler]") {
  auto d = decodeRemovePodsViolatingTopologySpreadConstraintArgs(nullptr);
  REQUIRE(d.has_value());
  CHECK(d->constraints == std::vector<UCA>{UCA::kDoNotSchedule});
  CHECK(d->topology_balance_node_fit);

  auto soft = decode(R"({"includeSoftConstraints": true, "topologyBalanceNodeFit": false})");
  REQUIRE(soft.has_value());
  CHECK(soft->allows(UCA::kScheduleAnyway));
  CHECK(soft->allows(UCA::kDoNotSchedule));
  CHECK_FALSE(soft->topology_balance_node_fit);

  auto only_soft = decode(R"({"constraints": ["ScheduleAnyway"]})");
  REQUIRE(only_soft.has_value());
  CHECK(only_soft->constraints == std::vector<UCA>{UCA::kScheduleAnyway});

  struct Case {
    const char* json;
    const char* want;
  };
  const Case cases[] = {
      {R"({"constraints": ["Sometimes"]})", "constraints[0]"},
      {R"({"topologyBalanceNodeFit": 1})", "topologyBalanceNodeFit"},
      {R"({"maxSkew": 1})", "unknown field \"maxSkew\""},
      {R"({"labelSelector": {"matchExpressions": [{"key": "a", "operator": "Near"}]}})",
       "labelSelector"},
  };
  for (const auto& c : cases) {
    INFO(c.json);
    auto r = decode(c.json);
    REQUIRE_FALSE(r.has_value());
    CHECK_THAT(r.error().message, Catch::Contains(c.want));
  }
}

std::vector<Pod> podsNamed(int n, const std::string& prefix) {
  std::vector<Pod> out(n);
  for (int i = 0; i < n; ++i)
    out[i].name = prefix + std::to_string(i);
  return out;
}

TEST_CASE("balanceDomains: moves from above the average to below it", "[descheduler]") {
  struct Case {
    std::vector<int> sizes;
    std::int32_t max_skew;
    std::size_t moved;
  };
  const Case cases[] = {
      {{4, 0, 0}, 1, 3},  // ends 2, 1, 1
      {{2, 1, 1}, 1, 0},  // within the skew
      {{6, 0}, 1, 3},     // 3, 3
      {{6, 0}, 2, 2},     // at most half the excess skew each step: 4, 2
      {{5, 5, 0}, 1, 3},  // the average caps what the small domain takes
  };
  for (const auto& c : cases) {
    INFO(c.sizes.size() << " domains, maxSkew " << c.max_skew);
    std::vector<std::vector<Pod>> storage;
    std::vector<Domain> domains;
    for (std::size_t k = 0; k < c.sizes.size(); ++k) {
      storage.push_back(podsNamed(c.sizes[k], "d" + std::to_string(k) + "-"));
    }
    for (std::size_t k = 0; k < c.sizes.size(); ++k) {
      Domain d{"v" + std::to_string(k), {}};
      for (const Pod& p : storage[k])
        d.pods.push_back(&p);
      domains.push_back(std::move(d));
    }
    std::vector<std::string> targets_seen;
    auto chosen = balanceDomains(
        domains, c.max_skew, [](const Pod&) { return true; },
        [&](const Pod&, const std::vector<std::string>& values) {
          targets_seen = values;
          return true;
        });
    CHECK(chosen.size() == c.moved);
    for (const std::string& v : targets_seen)
      CHECK(v != "v0");  // the largest domain is never below the average
  }
}

TEST_CASE("balanceDomains: kept pods and pods bound by node constraints go last", "[descheduler]") {
  std::vector<Pod> big = podsNamed(4, "a");
  big[3].node_selector = {{"disk", "ssd"}};  // would be taken first by position alone
  big[2].name = "kept";
  Domain a{"a", {}}, b{"b", {}};
  for (const Pod& p : big)
    a.pods.push_back(&p);
  auto chosen = balanceDomains(
      {a, b}, 1, [](const Pod& p) { return p.name != "kept"; },
      [](const Pod&, const std::vector<std::string>&) { return true; });
  REQUIRE(chosen.size() == 2);
  CHECK(chosen[0]->name == "a0");
  CHECK(chosen[1]->name == "a1");
  CHECK(domainsBalanced({a}, 0));
  CHECK_FALSE(domainsBalanced({a, b}, 3));
}

struct Zones {
  FakeHandle h;
  Zones(int nodes, std::int64_t node_cpu = 4000) {
    for (int i = 0; i < nodes; ++i) {
      auto n = makeNode("n" + std::to_string(i), node_cpu);
      n->labels["zone"] = "z" + std::to_string(i);
      h.snap.addNode(n);
    }
  }
  void add(std::string name, int node, UCA action = UCA::kDoNotSchedule, std::int64_t cpu = 100,
           std::string ns = "default") {
    auto p = makePod(std::move(name), "n" + std::to_string(node), cpu, 1, "rs", std::move(ns));
    p->labels["app"] = "web";
    TopologySpreadConstraint c;
    c.max_skew = 1;
    c.topology_key = "zone";
    c.when_unsatisfiable = action;
    c.selector = kube::Selector::parse("app=web").value();
    c.has_selector = true;
    p->topology_spread = {c};
    h.snap.addPod(p);
  }
  std::vector<std::string> run(std::string_view args_json = "{}") {
    auto args = decode(args_json);
    REQUIRE(args.has_value());
    auto plugin = makeRemovePodsViolatingTopologySpreadConstraint(
        std::make_shared<RemovePodsViolatingTopologySpreadConstraintArgs>(*args), h);
    REQUIRE(plugin.has_value());
    REQUIRE(dynamic_cast<BalancePlugin&>(**plugin).balance(h.nodes()).has_value());
    return h.evicted;
  }
};

TEST_CASE("TopologySpread: a skewed constraint evicts from the largest domain", "[descheduler]") {
  Zones z(3);
  for (int i = 0; i < 4; ++i)
    z.add("p" + std::to_string(i), 0);
  auto evicted = z.run();
  CHECK(evicted.size() == 3);
  for (const auto& e : evicted)
    CHECK(e != "default/p0");  // the pod at the bottom of the domain stays
  CHECK(z.h.options.at(0).plugin_name == kRemovePodsViolatingTopologySpreadConstraintName);
}

TEST_CASE("TopologySpread: soft constraints, nodeFit, namespaces and caps", "[descheduler]") {
  struct Case {
    const char* name;
    const char* args;
    UCA action;
    std::int64_t cpu;
    const char* ns;
    std::size_t want;
  };
  const Case cases[] = {
      {"balanced already", "{}", UCA::kDoNotSchedule, 100, "default", 0},
      {"soft ignored by default", "{}", UCA::kScheduleAnyway, 100, "default", 0},
      {"soft included", R"({"includeSoftConstraints": true})", UCA::kScheduleAnyway, 100, "default",
       1},
      {"soft via constraints", R"({"constraints": ["ScheduleAnyway"]})", UCA::kScheduleAnyway, 100,
       "default", 1},
      {"nowhere to go", "{}", UCA::kDoNotSchedule, 3000, "default", 0},
      {"nowhere to go, nodeFit off", R"({"topologyBalanceNodeFit": false})", UCA::kDoNotSchedule,
       3000, "default", 1},
      {"namespace excluded", R"({"namespaces": {"exclude": ["default"]}})", UCA::kDoNotSchedule,
       100, "default", 0},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    Zones z(2);
    // Node 1 is nearly full for the large pods: 3000m of its 4000m are taken.
    auto filler = makePod("filler", "n1", 3000, 1, "", "infra");
    z.h.snap.addPod(filler);
    const int on_first = std::string(c.name) == "balanced already" ? 2 : 3;
    for (int i = 0; i < on_first; ++i)
      z.add("p" + std::to_string(i), 0, c.action, c.cpu, c.ns);
    z.add("q", 1, c.action, 100, c.ns);
    CHECK(z.run(c.args).size() == c.want);
  }

  Zones capped(3);
  for (int i = 0; i < 6; ++i)
    capped.add("p" + std::to_string(i), 0);
  capped.h.max_total = 2;
  CHECK(capped.run().size() == 2);
}

}  // namespace
}  // namespace koord::roles::descheduler::topologyspread
