#include <functional>
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
using std::chrono::minutes;

namespace {

// A 16-core / 32Gi pod (estimated 13.6 cores, 22.4Gi) scored on a 96-core / 512Gi node.
struct Case {
  const char* name;
  std::optional<koord::apis::NodeMetric> metric = std::nullopt;
  std::int64_t want;
  std::function<void(LoadAwareSchedulingArgs&)> args = [](LoadAwareSchedulingArgs&) {};
  PodInfo subject = pod("incoming", res("16", "32Gi"));
};

std::int64_t runScore(const Case& c) {
  auto args = std::make_shared<LoadAwareSchedulingArgs>();
  c.args(*args);
  FakeHandle handle;
  if (c.metric)
    handle.setMetric(*c.metric);
  LoadAwareScheduling plugin(args, handle, [] { return kNow; });
  CycleState state;
  REQUIRE(plugin.preFilter(state, c.subject).ok());
  std::int64_t score = -1;
  REQUIRE(plugin.score(state, c.subject, nodeInfo(node()), score).ok());
  return score;
}

}  // namespace

TEST_CASE("loadaware score: table", "[scheduler][loadaware]") {
  // Loaded node: cpu 32 + 13.6 = 45.6 of 96 scores 52; memory 10 + 22.4 = 32.4 of 512Gi, 93.
  const std::vector<Case> cases = {
      {.name = "empty node: (85 + 95) / 2", .metric = metric("0", "0"), .want = 90},
      {.name = "loaded node: (52 + 93) / 2", .metric = metric("32", "10Gi"), .want = 72},
      {.name = "weights cpu 3, memory 1: (3x52 + 93) / 4",
       .metric = metric("32", "10Gi"),
       .want = 62,
       .args =
           [](auto& a) {
             a.resource_weights = {{"cpu", 3}, {"memory", 1}};
           }},
      {.name = "dominant weight 1: (52 + 93 + 52) / 3",
       .metric = metric("32", "10Gi"),
       .want = 65,
       .args = [](auto& a) { a.dominant_resource_weight = 1; }},
      {.name = "dominant weight alone: the least free resource",
       .metric = metric("32", "10Gi"),
       .want = 52,
       .args =
           [](auto& a) {
             a.resource_weights.clear();
             a.dominant_resource_weight = 1;
           }},
      {.name = "no weights at all: scoring is off",
       .metric = metric("32", "10Gi"),
       .want = 0,
       .args = [](auto& a) { a.resource_weights.clear(); }},
      {.name = "estimate above allocatable scores 0 for that resource: (0 + 93) / 2",
       .metric = metric("90", "10Gi"),
       .want = 46},
      {.name = "missing NodeMetric scores 0", .metric = std::nullopt, .want = 0},
      {.name = "expired NodeMetric scores 0", .metric = metric("0", "0", minutes(3)), .want = 0},
      {.name = "expired scores 0 even without filterExpiredNodeMetrics",
       .metric = metric("0", "0", minutes(3)),
       .want = 0,
       .args = [](auto& a) { a.filter_expired_node_metrics = false; }},
      {.name = "scoreAccordingProdUsage: a prod pod sees prod usage only (empty node's score)",
       .metric = metric("32", "10Gi"),
       .want = 90,
       .args = [](auto& a) { a.score_according_prod_usage = true; },
       .subject =
           [] {
             PodInfo p = pod("incoming", res("16", "32Gi"));
             p.priority_class = PriorityClass::kProd;
             return p;
           }()},
      {.name = "aggregated scoring reads the p95 usage: (52 + 93) / 2",
       .metric =
           [] {
             auto m = metric("0", "0");
             koord::apis::AggregatedUsage agg;
             agg.duration = minutes(5);
             agg.usage["p95"] = list("32", "10Gi");
             m.node_metric->aggregated_node_usages.push_back(agg);
             return m;
           }(),
       .want = 72,
       .args =
           [](auto& a) {
             a.aggregated = LoadAwareSchedulingAggregatedArgs{};
             a.aggregated->score_aggregation_type = "p95";
           }},
  };
  for (const auto& c : cases) {
    SECTION(c.name) {
      CHECK(runScore(c) == c.want);
    }
  }
}

TEST_CASE("loadaware score: the formula", "[scheduler][loadaware]") {
  struct Case {
    std::int64_t dominant;
    ResourceVector weights, used, allocatable;
    std::int64_t want;
  };
  const std::vector<Case> cases = {
      {0, {1, 1}, {0, 0}, {100, 100}, 100},  {0, {1, 1}, {50, 0}, {100, 100}, 75},
      {0, {1, 1}, {150, 0}, {100, 100}, 50},  // used above capacity scores 0
      {0, {1, 1}, {0, 0}, {0, 100}, 50},      // nothing allocatable scores 0
      {2, {1, 1}, {50, 0}, {100, 100}, 62},   // (50 + 100 + 2 x 50) / 4
      {1, {1, 0}, {0, 80}, {100, 100}, 60},   // the minimum covers unweighted resources
      {0, {0, 0}, {0, 0}, {100, 100}, 0},
  };
  for (const auto& c : cases) {
    CAPTURE(c.dominant, c.weights, c.used, c.allocatable);
    CHECK(loadAwareScore(c.dominant, c.weights, c.used, c.allocatable) == c.want);
  }
}
