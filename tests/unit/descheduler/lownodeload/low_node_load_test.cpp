// LowNodeLoad over a FakeHandle: classification from NodeMetric usage, stale metrics, eviction
// order and stopping points, caps, nodeFit, the anomaly count, deviation and prod thresholds,
// namespaces and pod selectors.
#include "plugins/lownodeload/low_node_load.h"

#include <boost/json.hpp>

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "fake_handle.h"
#include "plugins/lownodeload/args.h"
#include "plugins/lownodeload/pod_order.h"
#include "plugins/lownodeload/register.h"
#include "registry_checks.h"

namespace koord::roles::descheduler::lownodeload {
namespace {

using namespace std::chrono_literals;

// Nodes of 10 cores and 10000 bytes, so that usage figures read as tenths of a percent.
constexpr std::int64_t kCpu = 10000;
constexpr std::int64_t kMem = 10000;

struct PodUse {
  std::string name;
  std::int64_t cpu;
  std::int64_t mem = 0;
  std::string ns = "default";
  kube::Labels labels = {};
};

// `n` pods named prefix1..prefixN sharing `total` cpu usage: one pod alone would overheat any
// target, which nodeFit refuses.
std::vector<PodUse> split(const std::string& prefix, std::int64_t total, int n = 3) {
  std::vector<PodUse> out;
  for (int i = 1; i <= n; ++i)
    out.push_back({prefix + std::to_string(i), total / n});
  return out;
}

struct Cluster {
  testkit::FakeHandle h;
  Cluster() { h.snap.now = TimePoint{} + 1000h; }

  // A node whose NodeMetric reports `pods` (each also bound there) and was written `age` ago.
  void node(const std::string& name, std::vector<PodUse> pods, std::chrono::seconds age = 0s,
            bool with_metric = true) {
    auto n = testkit::makeNode(name, kCpu, kMem);
    h.snap.addNode(n);
    auto m = std::make_shared<apis::NodeMetric>();
    m->name = name;
    m->update_time = h.snap.now - age;
    m->node_metric.emplace();
    for (const auto& u : pods) {
      auto p = testkit::makePod(u.name, name, 10, 10, "rs", u.ns);
      p->labels = u.labels;
      p->creation_timestamp = h.snap.now - 1h;
      h.snap.addPod(p);
      apis::PodMetricInfo pm;
      pm.namespace_ = u.ns;
      pm.name = u.name;
      pm.pod_usage = {{"cpu", kube::Quantity::fromMilli(u.cpu)},
                      {"memory", kube::Quantity::fromInt(u.mem)}};
      m->pods_metric.push_back(pm);
    }
    if (with_metric)
      h.snap.node_metrics[name] = m;
  }

  std::shared_ptr<LowNodeLoad> plugin(std::string_view json) {
    const boost::json::value v = boost::json::parse(json);
    auto a = decodeLowNodeLoadArgs(&v);
    REQUIRE(a.has_value());
    auto p = LowNodeLoad::make(std::make_shared<const LowNodeLoadArgs>(std::move(*a)), h);
    REQUIRE(p.has_value());
    return *p;
  }

  std::vector<std::string> run(std::string_view json) {
    auto p = plugin(json);
    REQUIRE(p->balance(h.nodes()).has_value());
    return h.evicted;
  }
};

// Low 30%, high 70% on cpu and memory, acting on the first pass.
constexpr std::string_view kArgs = R"({
  "lowThresholds": {"cpu": 30, "memory": 30}, "highThresholds": {"cpu": 70, "memory": 70},
  "anomalyCondition": {"consecutiveAbnormalities": 1}})";

const kube::Labels kBatch = {{"koordinator.sh/priority-class", "koord-batch"}};
const kube::Labels kProd = {{"koordinator.sh/priority-class", "koord-prod"}};

TEST_CASE("LowNodeLoad: evicts from the hot node in Koordinator's order until under high",
          "[descheduler]") {
  Cluster c;
  // hot: 95% cpu, over by 25%. The batch pod goes first whatever its size; then the pod whose
  // usage best covers the excess (b), after which the node is under 70% and eviction stops.
  c.node("hot", {{"a", 500, 0, "default", kBatch}, {"b", 3000}, {"c", 6000}});
  c.node("cold", {{"x", 1000}});
  c.node("warm", {{"y", 5000}});
  auto evicted = c.run(kArgs);
  CHECK(evicted == std::vector<std::string>{"default/a", "default/b"});
  REQUIRE(c.h.options.size() == 2);
  CHECK(c.h.options[0].plugin_name == "LowNodeLoad");
  CHECK_THAT(c.h.options[0].reason, Catch::Contains("hot") && Catch::Contains("cpu 95.00%"));
}

TEST_CASE("LowNodeLoad: hot and cold classification decides whether anything moves",
          "[descheduler]") {
  struct Case {
    const char* name;
    std::vector<std::int64_t> node_cpu;  // one pod per node with this usage
    std::size_t evictions;
  };
  const Case cases[] = {
      {"one hot, one cold", {9000, 1000}, 1},
      {"no cold node", {9000, 5000}, 0},
      {"no hot node", {6000, 1000}, 0},
      {"at the low threshold counts as cold", {9000, 3000}, 1},
      {"at the high threshold is not hot", {7000, 1000}, 0},
  };
  for (const auto& k : cases) {
    CAPTURE(k.name);
    Cluster c;
    for (std::size_t i = 0; i < k.node_cpu.size(); ++i)
      c.node("n" + std::to_string(i), split("p" + std::to_string(i), k.node_cpu[i]));
    CHECK(c.run(kArgs).size() == k.evictions);
  }
}

TEST_CASE("LowNodeLoad: a node with a missing or stale NodeMetric is neither source nor target",
          "[descheduler]") {
  SECTION("stale cold node: no target, nothing moves") {
    Cluster c;
    c.node("hot", {{"a", 9000}});
    c.node("cold", {{"x", 1000}}, 180s);
    CHECK(c.run(kArgs).empty());
  }
  SECTION("cold node without a NodeMetric: nothing moves") {
    Cluster c;
    c.node("hot", {{"a", 9000}});
    c.node("cold", {{"x", 1000}}, 0s, false);
    CHECK(c.run(kArgs).empty());
  }
  SECTION("stale hot node is never evicted from") {
    Cluster c;
    c.node("hot", split("a", 9000), 200s);
    c.node("hot2", split("b", 9000));
    c.node("cold", {{"x", 1000}});
    CHECK(c.run(kArgs) == std::vector<std::string>{"default/b1"});
  }
  SECTION("nodeMetricExpirationSeconds moves the limit") {
    Cluster c;
    c.node("hot", split("a", 9000), 200s);
    c.node("cold", {{"x", 1000}});
    CHECK(c.run(R"({"lowThresholds": {"cpu": 30}, "highThresholds": {"cpu": 70},
                    "nodeMetricExpirationSeconds": 300,
                    "anomalyCondition": {"consecutiveAbnormalities": 1}})") ==
          std::vector<std::string>{"default/a1"});
  }
}

TEST_CASE("LowNodeLoad: the per-node cap and the cold nodes' headroom stop eviction",
          "[descheduler]") {
  SECTION("per-node cap") {
    Cluster c;
    c.h.max_per_node = 1;
    c.node("hot", {{"a", 500, 0, "default", kBatch}, {"b", 3000}, {"c", 6000}});
    c.node("cold", {{"x", 1000}});
    CHECK(c.run(kArgs) == std::vector<std::string>{"default/a"});
  }
  SECTION("headroom used up") {
    Cluster c;
    // cold has 6% of headroom under 70%: the first 10% pod uses it up, and hot stays at 80%.
    c.node("hot", split("p", 9000, 9));
    c.node("cold", {{"x", 6400}}, 0s);
    auto evicted = c.run(R"({"lowThresholds": {"cpu": 65}, "highThresholds": {"cpu": 70},
                             "nodeFit": false,
                             "anomalyCondition": {"consecutiveAbnormalities": 1}})");
    CHECK(evicted.size() == 1);
  }
}

TEST_CASE("LowNodeLoad: nodeFit keeps a pod that no cold node has room for", "[descheduler]") {
  for (bool fit : {true, false}) {
    CAPTURE(fit);
    Cluster c;
    // The pod's usage (8000) would take the cold node past its 70% high threshold.
    c.node("hot", {{"big", 8000}, {"small", 1500}});
    c.node("cold", {{"x", 1000}});
    const std::string args = std::string(R"({"lowThresholds": {"cpu": 30},
        "highThresholds": {"cpu": 70}, "anomalyCondition": {"consecutiveAbnormalities": 1},
        "nodeFit": )") + (fit ? "true" : "false") +
                             "}";
    auto evicted = c.run(args);
    REQUIRE_FALSE(evicted.empty());
    if (fit)
      CHECK(evicted == std::vector<std::string>{"default/small"});
    else
      CHECK(evicted.front() == "default/big");
  }
}

TEST_CASE("LowNodeLoad: a node is a source only once its abnormal count passes the condition",
          "[descheduler]") {
  Cluster c;
  c.node("hot", split("a", 9000));
  c.node("cold", {{"x", 1000}});
  auto p = c.plugin(R"({"lowThresholds": {"cpu": 30}, "highThresholds": {"cpu": 70},
                        "anomalyCondition": {"consecutiveAbnormalities": 3}})");
  // Koordinator's detector wants more than the configured count: the fourth pass acts.
  for (int pass = 1; pass <= 3; ++pass) {
    CAPTURE(pass);
    REQUIRE(p->balance(c.h.nodes()).has_value());
    CHECK(c.h.evicted.empty());
    c.h.snap.now += 1s;
  }
  REQUIRE(p->balance(c.h.nodes()).has_value());
  CHECK(c.h.evicted == std::vector<std::string>{"default/a1"});
}

TEST_CASE("LowNodeLoad: deviation thresholds are taken around the mean", "[descheduler]") {
  struct Case {
    bool deviation;
    std::vector<std::string> evicted;
  };
  // 20%, 50%, 80%: the mean is 50%, so with 10 points either side 20% is cold and 80% hot; as
  // plain percents nothing is under 10% and nothing moves.
  for (const auto& k : {Case{true, {"default/c1"}}, Case{false, {}}}) {
    CAPTURE(k.deviation);
    Cluster c;
    c.node("a", {{"a", 2000}});
    c.node("b", {{"b", 5000}});
    c.node("c", split("c", 8000, 2));
    const std::string args = std::string(R"({"lowThresholds": {"cpu": 10},
        "highThresholds": {"cpu": 10}, "anomalyCondition": {"consecutiveAbnormalities": 1},
        "useDeviationThresholds": )") +
                             (k.deviation ? "true" : "false") + "}";
    CHECK(c.run(args) == k.evicted);
  }
}

TEST_CASE("LowNodeLoad: prod thresholds move prod pods off nodes hot with prod usage",
          "[descheduler]") {
  Cluster c;
  // Node usage stays under the (default) node thresholds; prod usage is 60% against 50%.
  c.node("hot", {{"batch", 2000, 0, "default", kBatch},
                 {"prod1", 3000, 0, "default", kProd},
                 {"prod2", 3000, 0, "default", kProd}});
  c.node("cold", {{"x", 500, 0, "default", kProd}});
  auto evicted = c.run(R"({"prodLowThresholds": {"cpu": 20}, "prodHighThresholds": {"cpu": 50},
                           "anomalyCondition": {"consecutiveAbnormalities": 1}})");
  CHECK(evicted == std::vector<std::string>{"default/prod1"});
  REQUIRE(c.h.options.size() == 1);
  CHECK_THAT(c.h.options[0].reason, Catch::Contains("prod cpu 60.00%"));
}

TEST_CASE("LowNodeLoad: evictableNamespaces, podSelectors and the handle's filter",
          "[descheduler]") {
  const kube::Labels web = {{"app", "web"}};
  struct Case {
    const char* extra;
    std::vector<std::string> evicted;
  };
  const Case cases[] = {
      {R"("evictableNamespaces": {"exclude": ["kube-system"]})", {"ns1/a"}},
      {R"("evictableNamespaces": {"include": ["kube-system"]})", {"kube-system/sys"}},
      {R"("podSelectors": [{"name": "web", "selector": {"matchLabels": {"app": "web"}}}])",
       {"ns1/w"}},
  };
  for (const auto& k : cases) {
    CAPTURE(k.extra);
    Cluster c;
    // Each pod alone brings hot under 70%, so exactly one goes: the first allowed in usage
    // order (sys, a, w). w fits the cold node only when it is the sole candidate.
    c.node("hot",
           {{"sys", 2000, 0, "kube-system"}, {"a", 3000, 0, "ns1"}, {"w", 3500, 0, "ns1", web}});
    c.node("cold", {{"x", 1000}});
    const std::string args = std::string(R"({"lowThresholds": {"cpu": 30},
        "highThresholds": {"cpu": 70}, "anomalyCondition": {"consecutiveAbnormalities": 1},)") +
                             k.extra + "}";
    CHECK(c.run(args) == k.evicted);
  }
  SECTION("the handle's filter refuses a pod") {
    Cluster c;
    c.h.filter_fn = [](const Pod& p) { return p.name != "a"; };
    c.node("hot", {{"a", 3000}, {"b", 3000}, {"d", 3000}});
    c.node("cold", {{"x", 1000}});
    auto evicted = c.run(kArgs);
    REQUIRE(evicted.size() == 1);
    CHECK(evicted[0] != "default/a");
  }
}

TEST_CASE("LowNodeLoad: paused, dryRun and numberOfNodes hold evictions back", "[descheduler]") {
  for (const char* extra : {R"("paused": true)", R"("dryRun": true)", R"("numberOfNodes": 1)"}) {
    CAPTURE(extra);
    Cluster c;
    c.node("hot", split("a", 9000));
    c.node("cold", {{"x", 1000}});
    const std::string args = std::string(R"({"lowThresholds": {"cpu": 30},
        "highThresholds": {"cpu": 70}, "anomalyCondition": {"consecutiveAbnormalities": 1},)") +
                             extra + "}";
    CHECK(c.run(args).empty());
  }
}

TEST_CASE("LowNodeLoad: each node pool uses its own thresholds", "[descheduler]") {
  Cluster c;
  c.node("a-hot", {{"a", 8000}});
  c.node("a-cold", {{"x", 1000}});
  c.node("b-hot", split("b", 8000, 2));
  c.node("b-cold", {{"y", 1000}});
  for (const char* n : {"a-hot", "a-cold"})
    const_cast<Node&>(*c.h.snap.node(n)).labels["pool"] = "a";
  for (const char* n : {"b-hot", "b-cold"})
    const_cast<Node&>(*c.h.snap.node(n)).labels["pool"] = "b";
  // Pool a treats 80% as fine; pool b does not. The top level selects no node.
  auto evicted = c.run(R"({"nodeSelector": {"matchLabels": {"pool": "none"}},
      "anomalyCondition": {"consecutiveAbnormalities": 1},
      "nodePools": [
        {"name": "a", "nodeSelector": {"matchLabels": {"pool": "a"}},
         "lowThresholds": {"cpu": 30}, "highThresholds": {"cpu": 90}},
        {"name": "b", "nodeSelector": {"matchLabels": {"pool": "b"}},
         "lowThresholds": {"cpu": 30}, "highThresholds": {"cpu": 70}}]})");
  CHECK(evicted == std::vector<std::string>{"default/b1"});
}

TEST_CASE("LowNodeLoad: the registry entry decodes, defaults and builds", "[descheduler]") {
  const PluginFactory f = testkit::registeredEntry(registerLowNodeLoad, "LowNodeLoad");
  testkit::checkBuildsWithDefaults<BalancePlugin>(f, "LowNodeLoad");
  auto refused = testkit::decodeEntryArgs(f, R"({"lowThreshold": {}})");
  REQUIRE_FALSE(refused.has_value());
  CHECK_THAT(refused.error().message, Catch::Contains("lowThreshold"));
}

}  // namespace
}  // namespace koord::roles::descheduler::lownodeload

namespace koord::roles::descheduler::lownodeload {

TEST_CASE("LowNodeLoad: Kubernetes QoS orders pods of equal priority before Koordinator's",
          "[descheduler]") {
  // Koordinator's PodSorter: ... Priority, KubernetesQoSClass, KoordinatorQoSClass, ...
  auto mk = [](std::string name, apis::KubeQoS kube, apis::QoSClass koord) {
    Pod p;
    p.namespace_ = "default";
    p.name = std::move(name);
    p.priority = 9000;
    p.kube_qos = kube;
    p.qos = koord;
    return p;
  };
  const Pod guaranteed_be = mk("guaranteed-be", apis::KubeQoS::kGuaranteed, apis::QoSClass::kBE);
  const Pod burstable_ls = mk("burstable-ls", apis::KubeQoS::kBurstable, apis::QoSClass::kLS);
  const Pod besteffort_lsr = mk("besteffort-lsr", apis::KubeQoS::kBestEffort, apis::QoSClass::kLSR);
  std::vector<const Pod*> pods{&guaranteed_be, &burstable_ls, &besteffort_lsr};
  sortForEviction(pods, {}, {}, {});
  std::vector<std::string> names;
  for (const Pod* p : pods)
    names.push_back(p->name);
  CHECK(names == std::vector<std::string>{"besteffort-lsr", "burstable-ls", "guaranteed-be"});
}

}  // namespace koord::roles::descheduler::lownodeload
