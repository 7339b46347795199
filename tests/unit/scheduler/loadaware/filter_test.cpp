#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "fixture.h"
#include "plugins/loadaware/load_aware.h"

using namespace koord::roles::scheduler::loadaware;
using namespace loadaware_test;
using koord::apis::PriorityClass;
using koord::apis::QoSClass;
using koord::roles::scheduler::Code;
using std::chrono::minutes;
using std::chrono::seconds;

namespace {

// Every case places a 16-core / 32Gi pod (estimated 13.6 cores, 22.4Gi) on a 96-core / 512Gi
// node; the default thresholds are cpu 65 %, memory 95 %.
PodInfo incoming() {
  return pod("incoming", res("16", "32Gi"));
}

PodInfo prodPod(std::string name, Resource r) {
  PodInfo p = pod(std::move(name), std::move(r));
  p.qos = QoSClass::kLS;  // prod by its QoS
  return p;
}

struct Case {
  const char* name;
  std::optional<koord::apis::NodeMetric> metric = std::nullopt;
  Code code = Code::kSuccess;
  std::string reason = {};
  std::function<void(LoadAwareSchedulingArgs&)> args = [](LoadAwareSchedulingArgs&) {};
  koord::kube::Labels node_annotations = {};
  PodInfo pod = incoming();
  /// Pods bound before the case runs: (pod, when it was scheduled).
  std::vector<std::pair<PodInfo, TimePoint>> bound = {};
};

koord::apis::NodeMetric withPods(koord::apis::NodeMetric m,
                                 std::vector<koord::apis::PodMetricInfo> pods) {
  m.pods_metric = std::move(pods);
  return m;
}

koord::apis::NodeMetric withP95(koord::apis::NodeMetric m, std::string_view cpu) {
  koord::apis::AggregatedUsage agg;
  agg.duration = minutes(5);
  agg.usage["p95"] = list(cpu, "10Gi");
  m.node_metric->aggregated_node_usages.push_back(agg);
  return m;
}

koord::apis::NodeMetric withoutNodeMetric(koord::apis::NodeMetric m) {
  m.node_metric.reset();
  return m;
}

Status runFilter(const Case& c) {
  auto args = std::make_shared<LoadAwareSchedulingArgs>();
  c.args(*args);
  REQUIRE(validateLoadAwareSchedulingArgs(*args).has_value());
  FakeHandle handle;
  if (c.metric)
    handle.setMetric(*c.metric);
  LoadAwareScheduling plugin(args, handle, [] { return kNow; });
  for (const auto& [p, at] : c.bound) {
    PodInfo bound = p;
    bound.node_name = "node-1";
    plugin.podAssignCache().onPodAdd(bound, at, std::nullopt);
  }
  CycleState state;
  REQUIRE(plugin.preFilter(state, c.pod).ok());
  return plugin.filter(state, c.pod, nodeInfo(node("node-1", c.node_annotations)));
}

}  // namespace

TEST_CASE("loadaware filter: usage against thresholds", "[scheduler][loadaware]") {
  const std::vector<Case> cases = {
      {.name = "under both thresholds (47.5 % cpu)", .metric = metric("32", "100Gi")},
      {.name = "cpu over: 50 + 13.6 cores is 66 %",
       .metric = metric("50", "100Gi"),
       .code = Code::kUnschedulable,
       .reason = "node(s) cpu usage exceed threshold"},
      {.name = "memory over: 480 + 22.4 Gi is 98 %",
       .metric = metric("10", "480Gi"),
       .code = Code::kUnschedulable,
       .reason = "node(s) memory usage exceed threshold"},
      {.name = "exactly at the threshold passes (48.8 + 13.6 cores is 65 %)",
       .metric = metric("48800m", "100Gi")},
      {.name = "rounded to the threshold passes (65.4 %)", .metric = metric("49200m", "100Gi")},
      {.name = "rounded over the threshold fails (65.52 %)",
       .metric = metric("49300m", "100Gi"),
       .code = Code::kUnschedulable,
       .reason = "node(s) cpu usage exceed threshold"},
      {.name = "a zero threshold disables that resource",
       .metric = metric("90", "100Gi"),
       .args =
           [](auto& a) {
             a.usage_thresholds = {{"cpu", 0}, {"memory", 95}};
           }},
      {.name = "all thresholds zero disables the filter",
       .metric = metric("90", "500Gi"),
       .args =
           [](auto& a) {
             a.usage_thresholds = {{"cpu", 0}};
           }},
      {.name = "the node annotation lowers a threshold",
       .metric = metric("32", "100Gi"),
       .code = Code::kUnschedulable,
       .reason = "node(s) cpu usage exceed threshold",
       .node_annotations = {{"scheduling.koordinator.sh/usage-thresholds",
                             R"({"usageThresholds": {"cpu": 30}})"}}},
      {.name = "the node annotation raises a threshold",
       .metric = metric("50", "100Gi"),
       .node_annotations = {{"scheduling.koordinator.sh/usage-thresholds",
                             R"({"usageThresholds": {"cpu": 90, "memory": 95}})"}}},
      {.name = "the node annotation's thresholds replace the args' as a whole",
       .metric = metric("10", "480Gi"),
       .node_annotations = {{"scheduling.koordinator.sh/usage-thresholds",
                             R"({"usageThresholds": {"cpu": 90}})"}}},
      {.name = "a malformed node annotation keeps the args' thresholds",
       .metric = metric("50", "100Gi"),
       .code = Code::kUnschedulable,
       .reason = "node(s) cpu usage exceed threshold",
       .node_annotations = {{"scheduling.koordinator.sh/usage-thresholds",
                             R"({"usageThresholds": {"cpu": "ninety"}})"}}},
      {.name = "raw-allocatable is what usage is measured against",
       .metric = metric("20", "100Gi"),
       .code = Code::kUnschedulable,
       .reason = "node(s) cpu usage exceed threshold",
       .node_annotations = {{"node.koordinator.sh/raw-allocatable", R"({"cpu": "48"})"}}},
      {.name = "recently bound pods add their estimate",
       .metric = metric("40", "100Gi"),
       .code = Code::kUnschedulable,
       .reason = "node(s) cpu usage exceed threshold",
       .bound = {{pod("recent", res("16", "32Gi")), kNow - seconds(5)}}},
  };
  for (const auto& c : cases) {
    SECTION(c.name) {
      Status s = runFilter(c);
      CHECK(s.code() == c.code);
      if (!c.reason.empty())
        CHECK(s.message() == c.reason);
    }
  }
}

TEST_CASE("loadaware filter: NodeMetric freshness", "[scheduler][loadaware]") {
  const std::vector<Case> cases = {
      {.name = "no NodeMetric: the node is left to the other plugins", .metric = std::nullopt},
      {.name = "a NodeMetric without status.nodeMetric passes",
       .metric = withoutNodeMetric(metric("90", "500Gi"))},
      {.name = "179 s old is fresh", .metric = metric("1", "1Gi", seconds(179))},
      {.name = "180 s old is expired",
       .metric = metric("1", "1Gi", seconds(180)),
       .code = Code::kUnschedulable,
       .reason = "node(s) nodeMetric expired"},
      {.name = "never reported is expired",
       .metric =
           [] {
             auto m = metric("1", "1Gi");
             m.update_time.reset();
             return m;
           }(),
       .code = Code::kUnschedulable,
       .reason = "node(s) nodeMetric expired"},
      {.name = "expired passes with enableScheduleWhenNodeMetricsExpired",
       .metric = metric("90", "500Gi", minutes(10)),
       .args = [](auto& a) { a.enable_schedule_when_node_metrics_expired = true; }},
      {.name = "expiry unchecked without filterExpiredNodeMetrics: usage decides",
       .metric = metric("90", "100Gi", minutes(10)),
       .code = Code::kUnschedulable,
       .reason = "node(s) cpu usage exceed threshold",
       .args = [](auto& a) { a.filter_expired_node_metrics = false; }},
      {.name = "a custom expiration",
       .metric = metric("1", "1Gi", seconds(100)),
       .code = Code::kUnschedulable,
       .reason = "node(s) nodeMetric expired",
       .args = [](auto& a) { a.node_metric_expiration_seconds = 60; }},
      // Beyond int64 nanoseconds once converted: the conversion overflowed (found by
      // tests/fuzz/plugin_args_fuzz). Validation takes any positive value, as Koordinator does.
      {.name = "an expiration of centuries never expires a reported metric",
       .metric = metric("1", "1Gi", minutes(10)),
       .args = [](auto& a) { a.node_metric_expiration_seconds = 3222222222222200; }},
      {.name = "the largest expiration never expires a reported metric",
       .metric = metric("1", "1Gi", minutes(10)),
       .args =
           [](auto& a) {
             a.node_metric_expiration_seconds = std::numeric_limits<std::int64_t>::max();
           }},
      // now - updateTime is more than int64 nanoseconds hold: it overflowed into "fresh".
      {.name = "a metric reported centuries ago is expired",
       .metric =
           [] {
             auto m = metric("1", "1Gi");
             m.update_time =
                 TimePoint(std::chrono::nanoseconds(std::numeric_limits<std::int64_t>::min()));
             return m;
           }(),
       .code = Code::kUnschedulable,
       .reason = "node(s) nodeMetric expired"},
  };
  for (const auto& c : cases) {
    SECTION(c.name) {
      Status s = runFilter(c);
      CHECK(s.code() == c.code);
      if (!c.reason.empty())
        CHECK(s.message() == c.reason);
    }
  }
}

TEST_CASE("loadaware filter: DaemonSet, prod and aggregated paths", "[scheduler][loadaware]") {
  PodInfo daemon = incoming();
  daemon.controller_kind = "DaemonSet";
  // A prod pod "p-old" bound long ago, reported as prod using 20 cores.
  auto prodMetric = [](std::string_view node_cpu) {
    return withPods(metric(node_cpu, "100Gi"),
                    {podMetric("p-old", "20", "10Gi", PriorityClass::kProd)});
  };
  const std::vector<std::pair<PodInfo, TimePoint>> old_prod = {
      {prodPod("p-old", res("16", "32Gi")), kNow - minutes(30)}};
  auto prod30 = [](LoadAwareSchedulingArgs& a) { a.prod_usage_thresholds = {{"cpu", 30}}; };
  const std::vector<Case> cases = {
      {.name = "DaemonSet pods always pass", .metric = metric("95", "510Gi"), .pod = daemon},
      {.name = "DaemonSet pods pass an expired metric too",
       .metric = metric("1", "1Gi", minutes(10)),
       .pod = daemon},
      {.name = "prod pod: prod usage 20 + 13.6 cores is 35 % > 30",
       .metric = prodMetric("30"),
       .code = Code::kUnschedulable,
       .reason = "node(s) cpu usage exceed threshold",
       .args = prod30,
       .pod = prodPod("incoming", res("16", "32Gi")),
       .bound = old_prod},
      {.name = "non-prod pod on the same node uses the node thresholds",
       .metric = prodMetric("30"),
       .args = prod30,
       .bound = old_prod},
      {.name = "prod pod: prod thresholds replace the node's (node 76 %, prod 25 %)",
       .metric = withPods(metric("60", "100Gi"),
                          {podMetric("p-old", "10", "10Gi", PriorityClass::kProd)}),
       .args = prod30,
       .pod = prodPod("incoming", res("16", "32Gi")),
       .bound = old_prod},
      {.name = "prod thresholds from the node annotation",
       .metric = prodMetric("30"),
       .code = Code::kUnschedulable,
       .reason = "node(s) cpu usage exceed threshold",
       .node_annotations = {{"scheduling.koordinator.sh/usage-thresholds",
                             R"({"prodUsageThresholds": {"cpu": 30}})"}},
       .pod = prodPod("incoming", res("16", "32Gi")),
       .bound = old_prod},
      {.name = "aggregated p95: 40 + 13.6 cores is 56 % > 50",
       .metric = withP95(metric("10", "100Gi"), "40"),
       .code = Code::kUnschedulable,
       .reason = "node(s) cpu aggregated usage exceed threshold",
       .args =
           [](auto& a) {
             a.aggregated = LoadAwareSchedulingAggregatedArgs{};
             a.aggregated->usage_thresholds = {{"cpu", 50}};
             a.aggregated->usage_aggregation_type = "p95";
           }},
      {.name = "aggregated thresholds without a type are off",
       .metric = withP95(metric("10", "100Gi"), "40"),
       .args =
           [](auto& a) {
             a.aggregated = LoadAwareSchedulingAggregatedArgs{};
             a.aggregated->usage_thresholds = {{"cpu", 50}};
           }},
      {.name = "aggregated from the node annotation, by duration",
       .metric = withP95(metric("10", "100Gi"), "40"),
       .code = Code::kUnschedulable,
       .reason = "node(s) cpu aggregated usage exceed threshold",
       .node_annotations = {{"scheduling.koordinator.sh/usage-thresholds",
                             R"({"aggregatedUsage": {"usageThresholds": {"cpu": 50},
                                 "usageAggregationType": "p95",
                                 "usageAggregatedDuration": "5m"}})"}}},
  };
  for (const auto& c : cases) {
    SECTION(c.name) {
      Status s = runFilter(c);
      CHECK(s.code() == c.code);
      if (!c.reason.empty())
        CHECK(s.message() == c.reason);
    }
  }
}

TEST_CASE("loadaware filter: a node without a Node object is an error", "[scheduler][loadaware]") {
  FakeHandle handle;
  LoadAwareScheduling plugin(std::make_shared<LoadAwareSchedulingArgs>(), handle,
                             [] { return kNow; });
  CycleState state;
  Status s = plugin.filter(state, incoming(), NodeInfo{});
  CHECK(s.code() == Code::kError);
  CHECK(s.message() == "node not found");
}

TEST_CASE("loadaware filter: the NodeMetric attached to the NodeInfo wins over the cluster view",
          "[scheduler][loadaware]") {
  FakeHandle handle;
  // The cluster view says the node is idle; the cache's copy on the NodeInfo says it is busy.
  handle.setMetric(metric("1", "1Gi"));
  LoadAwareScheduling plugin(std::make_shared<LoadAwareSchedulingArgs>(), handle,
                             [] { return kNow; });
  NodeInfo info = nodeInfo(node());
  info.node_metric = std::make_shared<const koord::apis::NodeMetric>(metric("60", "10Gi"));
  CycleState state;
  Status busy = plugin.filter(state, incoming(), info);
  CHECK(busy.code() == Code::kUnschedulable);
  CHECK(busy.message() == "node(s) cpu usage exceed threshold");
  // Without an attached report the cluster view answers.
  CHECK(plugin.filter(state, incoming(), nodeInfo(node())).ok());
}
