// LowNodeLoadArgs: Koordinator's defaults, the top level as the first pool, pools inheriting it,
// and strict refusals naming the field.
#include "plugins/lownodeload/args.h"

#include <boost/json.hpp>

#include <catch2/catch.hpp>

#include <string>

#include "args_checks.h"

namespace koord::roles::descheduler::lownodeload {
namespace {

const auto decode = testkit::textDecoder(decodeLowNodeLoadArgs);

TEST_CASE("LowNodeLoadArgs: absent args take Koordinator's defaults", "[descheduler]") {
  auto a = decodeLowNodeLoadArgs(nullptr);
  REQUIRE(a.has_value());
  CHECK_FALSE(a->paused);
  CHECK_FALSE(a->dry_run);
  CHECK(a->number_of_nodes == 0);
  CHECK(a->node_metric_expiration_seconds == 180);
  CHECK_FALSE(a->evictable_namespaces);
  CHECK(a->pod_selectors.empty());
  CHECK(a->node_fit);
  CHECK(a->detector_cache_timeout == std::chrono::minutes(5));
  REQUIRE(a->pools.size() == 1);
  const NodePool& p = a->pools[0];
  CHECK(p.name == kDefaultPoolName);
  CHECK_FALSE(p.node_selector);
  CHECK_FALSE(p.use_deviation_thresholds);
  CHECK(p.low_thresholds.empty());
  CHECK(p.high_thresholds.empty());
  CHECK(p.resource_weights == ResourceWeights{{"cpu", 1}, {"memory", 1}});
  CHECK(p.anomaly_condition.timeout == std::chrono::minutes(1));
  CHECK(p.anomaly_condition.consecutive_abnormalities == 5);
  CHECK(p.anomaly_condition.consecutive_normalities == 3);
}

TEST_CASE("LowNodeLoadArgs: every member is read and pools inherit the top level",
          "[descheduler]") {
  auto a = decode(R"js({
    "paused": true, "dryRun": true, "numberOfNodes": 2, "nodeMetricExpirationSeconds": 60,
    "evictableNamespaces": {"exclude": ["kube-system"]},
    "nodeSelector": {"matchLabels": {"pool": "a"}},
    "podSelectors": [{"name": "web", "selector": {"matchLabels": {"app": "web"}}}],
    "nodeFit": false, "useDeviationThresholds": true,
    "highThresholds": {"cpu": 70, "memory": 80}, "lowThresholds": {"cpu": 30, "memory": 40},
    "prodHighThresholds": {"cpu": 60}, "prodLowThresholds": {"cpu": 20},
    "resourceWeights": {"cpu": 2, "memory": 0},
    "anomalyCondition": {"timeout": "2m", "consecutiveAbnormalities": 3},
    "detectorCacheTimeout": "10m",
    "nodePools": [
      {"name": "gpu", "nodeSelector": {"matchLabels": {"pool": "gpu"}},
       "highThresholds": {"cpu": 90}, "anomalyCondition": {"consecutiveNormalities": 7}}
    ]
  })js");
  REQUIRE(a.has_value());
  CHECK(a->paused);
  CHECK(a->dry_run);
  CHECK(a->number_of_nodes == 2);
  CHECK(a->node_metric_expiration_seconds == 60);
  REQUIRE(a->evictable_namespaces);
  CHECK(a->evictable_namespaces->exclude == std::vector<std::string>{"kube-system"});
  REQUIRE(a->pod_selectors.size() == 1);
  CHECK(a->pod_selectors[0].name == "web");
  REQUIRE(a->pod_selectors[0].selector);
  CHECK_FALSE(a->node_fit);
  CHECK(a->detector_cache_timeout == std::chrono::minutes(10));
  REQUIRE(a->pools.size() == 2);
  const NodePool& top = a->pools[0];
  REQUIRE(top.node_selector);
  CHECK(top.node_selector->match_labels.at("pool") == "a");
  CHECK(top.use_deviation_thresholds);
  CHECK(top.high_thresholds.at("memory") == 80);
  CHECK(top.prod_low_thresholds.at("cpu") == 20);
  // A weight of zero or less falls back to the default one.
  CHECK(top.resource_weights == ResourceWeights{{"cpu", 2}, {"memory", 1}});
  CHECK(top.anomaly_condition.timeout == std::chrono::minutes(2));
  CHECK(top.anomaly_condition.consecutive_abnormalities == 3);
  CHECK(top.anomaly_condition.consecutive_normalities == 3);
  const NodePool& gpu = a->pools[1];
  CHECK(gpu.name == "gpu");
  CHECK_FALSE(gpu.use_deviation_thresholds);
  CHECK(gpu.high_thresholds == Thresholds{{"cpu", 90}});
  CHECK(gpu.low_thresholds == top.low_thresholds);
  CHECK(gpu.prod_high_thresholds == top.prod_high_thresholds);
  CHECK(gpu.resource_weights == top.resource_weights);
  CHECK(gpu.anomaly_condition.consecutive_abnormalities == 3);
  CHECK(gpu.anomaly_condition.consecutive_normalities == 7);
}

TEST_CASE("LowNodeLoadArgs: strict decoding and validation name the field", "[descheduler]") {
  const testkit::Refusal cases[] = {
      {R"({"pause": true})", "pause"},
      {R"({"paused": "yes"})", "paused"},
      {R"({"dryRun": 1})", "dryRun"},
      {R"({"nodeFit": null, "numberOfNodes": "2"})", "numberOfNodes"},
      {R"({"numberOfNodes": -1})", "numberOfNodes"},
      {R"({"nodeMetricExpirationSeconds": 0})", "nodeMetricExpirationSeconds"},
      {R"({"nodeMetricExpirationSeconds": 1.5})", "nodeMetricExpirationSeconds"},
      {R"({"evictableNamespaces": {"include": ["a"], "exclude": ["b"]}})", "evictableNamespaces"},
      {R"({"evictableNamespaces": {"only": ["a"]}})", "only"},
      {R"({"evictableNamespaces": {"include": [1]}})", "evictableNamespaces.include"},
      {R"({"nodeSelector": {"matchLabels": {"a": "b c"}}})", "nodeSelector"},
      {R"({"nodeSelector": {"matchLabel": {}}})", "matchLabel"},
      {R"({"podSelectors": {}})", "podSelectors"},
      {R"({"podSelectors": [{"selector": {"matchLabels": {"-x": "y"}}}]})", "podSelectors[0]"},
      {R"({"podSelectors": [{"nme": "x"}]})", "nme"},
      {R"({"useDeviationThresholds": "true"})", "useDeviationThresholds"},
      {R"({"highThresholds": {"cpu": 101}})", "highThresholds[cpu]"},
      {R"({"lowThresholds": {"cpu": -1}})", "lowThresholds[cpu]"},
      {R"({"lowThresholds": {"cpu": "10"}})", "lowThresholds[cpu]"},
      {R"({"lowThresholds": {"cpu": 80}, "highThresholds": {"cpu": 70}})", "lowThresholds[cpu]"},
      {R"({"prodHighThresholds": {"cpu": 80}, "highThresholds": {"cpu": 70}})",
       "prodHighThresholds[cpu]"},
      {R"({"prodLowThresholds": {"cpu": 50}, "prodHighThresholds": {"cpu": 40}})",
       "prodLowThresholds[cpu]"},
      {R"({"resourceWeights": {"cpu": "1"}})", "resourceWeights[cpu]"},
      {R"({"anomalyCondition": {"timeout": 5}})", "anomalyCondition.timeout"},
      {R"({"anomalyCondition": {"consecutiveAbnormalities": -1}})",
       "anomalyCondition.consecutiveAbnormalities"},
      {R"({"anomalyCondition": {"count": 1}})", "count"},
      {R"({"detectorCacheTimeout": "5 minutes"})", "detectorCacheTimeout"},
      {R"({"nodePools": [{"name": "a", "lowThresholds": {"cpu": 90},
                          "highThresholds": {"cpu": 80}}]})",
       "nodePools[0].lowThresholds[cpu]"},
      {R"({"nodePools": [{"name": "a", "weights": {}}]})", "weights"},
      {R"({"nodePools": [{"nodeSelector": {"matchExpressions": [{"key": "a",
           "operator": "In"}]}}]})",
       "nodePools[0].nodeSelector"},
      {R"({"nodePools": [1]})", "nodePools[0]"},
      {R"([1])", "args"},
  };
  testkit::checkRefusals(decodeLowNodeLoadArgs, cases);
}

}  // namespace
}  // namespace koord::roles::descheduler::lownodeload
