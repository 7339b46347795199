#include "plugins/loadaware/args.h"

#include <boost/json.hpp>

#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "fixture.h"

using namespace koord::roles::scheduler::loadaware;
using std::chrono::minutes;

namespace {

koord::kube::Expected<LoadAwareSchedulingArgs> decode(std::string_view text) {
  boost::json::value v = boost::json::parse(text);
  return decodeLoadAwareSchedulingArgs(&v, "kubescheduler.config.k8s.io/v1beta1");
}

ResourceFactors factors(std::initializer_list<std::pair<const std::string, std::int64_t>> f) {
  return ResourceFactors(f);
}

}  // namespace

TEST_CASE("loadaware args: no args gives Koordinator's defaults", "[scheduler][loadaware]") {
  for (const boost::json::value* input : {static_cast<const boost::json::value*>(nullptr)}) {
    auto a = decodeLoadAwareSchedulingArgs(input, "");
    REQUIRE(a.has_value());
    CHECK(a->filter_expired_node_metrics);
    CHECK(a->node_metric_expiration_seconds == 180);
    CHECK_FALSE(a->enable_schedule_when_node_metrics_expired);
    CHECK(a->resource_weights == factors({{"cpu", 1}, {"memory", 1}}));
    CHECK(a->dominant_resource_weight == 0);
    CHECK(a->usage_thresholds == factors({{"cpu", 65}, {"memory", 95}}));
    CHECK(a->prod_usage_thresholds.empty());
    CHECK_FALSE(a->prod_usage_include_sys);
    CHECK_FALSE(a->score_according_prod_usage);
    CHECK(a->estimator.empty());
    CHECK(a->estimated_scaling_factors == factors({{"cpu", 85}, {"memory", 70}}));
    CHECK_FALSE(a->estimated_seconds_after_pod_scheduled);
    CHECK_FALSE(a->estimated_seconds_after_initialized);
    CHECK_FALSE(a->allow_customize_estimation);
    CHECK_FALSE(a->aggregated);
    CHECK(a->supported_resources.empty());
  }
  // An empty object and JSON null default the same way.
  auto empty = decode("{}");
  auto null = decode("null");
  REQUIRE(empty.has_value());
  REQUIRE(null.has_value());
  CHECK(empty->usage_thresholds == factors({{"cpu", 65}, {"memory", 95}}));
  CHECK(null->resource_weights == factors({{"cpu", 1}, {"memory", 1}}));
}

TEST_CASE("loadaware args: every field decodes", "[scheduler][loadaware]") {
  auto a = decode(R"({
    "apiVersion": "kubescheduler.config.k8s.io/v1beta2", "kind": "LoadAwareSchedulingArgs",
    "filterExpiredNodeMetrics": false, "nodeMetricExpirationSeconds": 300,
    "enableScheduleWhenNodeMetricsExpired": true,
    "resourceWeights": {"cpu": 3, "memory": 2}, "dominantResourceWeight": 5,
    "usageThresholds": {"cpu": 70}, "prodUsageThresholds": {"cpu": 50, "memory": 80},
    "prodUsageIncludeSys": true, "scoreAccordingProdUsage": true, "estimator": "default",
    "estimatedScalingFactors": {"cpu": 90}, "estimatedSecondsAfterPodScheduled": 120,
    "estimatedSecondsAfterInitialized": 30, "allowCustomizeEstimation": true,
    "aggregated": {"usageThresholds": {"cpu": 60}, "usageAggregationType": "p95",
                   "usageAggregatedDuration": "5m", "scoreAggregationType": "avg",
                   "scoreAggregatedDuration": "10m"},
    "supportedResources": ["kubernetes.io/batch-cpu"]
  })");
  REQUIRE(a.has_value());
  CHECK_FALSE(a->filter_expired_node_metrics);
  CHECK(a->node_metric_expiration_seconds == 300);
  CHECK(a->enable_schedule_when_node_metrics_expired);
  CHECK(a->resource_weights == factors({{"cpu", 3}, {"memory", 2}}));
  CHECK(a->dominant_resource_weight == 5);
  CHECK(a->usage_thresholds == factors({{"cpu", 70}}));  // given: memory is not filled in
  CHECK(a->prod_usage_thresholds == factors({{"cpu", 50}, {"memory", 80}}));
  CHECK(a->prod_usage_include_sys);
  CHECK(a->score_according_prod_usage);
  CHECK(a->estimator == "default");
  CHECK(a->estimated_scaling_factors == factors({{"cpu", 90}, {"memory", 70}}));
  CHECK(a->estimated_seconds_after_pod_scheduled == 120);
  CHECK(a->estimated_seconds_after_initialized == 30);
  CHECK(a->allow_customize_estimation);
  REQUIRE(a->aggregated);
  CHECK(a->aggregated->usage_thresholds == factors({{"cpu", 60}}));
  CHECK(a->aggregated->usage_aggregation_type == "p95");
  CHECK(a->aggregated->usage_aggregated_duration == minutes(5));
  CHECK(a->aggregated->score_aggregation_type == "avg");
  CHECK(a->aggregated->score_aggregated_duration == minutes(10));
  CHECK(a->supported_resources == std::vector<std::string>{"kubernetes.io/batch-cpu"});
  CHECK(vectorizerFor(*a).names() ==
        std::vector<std::string>{"cpu", "kubernetes.io/batch-cpu", "memory"});
}

TEST_CASE("loadaware args: defaulting follows presence", "[scheduler][loadaware]") {
  struct Case {
    const char* name;
    const char* json;
    ResourceFactors weights;
    ResourceFactors thresholds;
    ResourceFactors scaling;
  };
  const std::vector<Case> cases = {
      {"a dominant weight alone leaves the weights empty",
       R"({"dominantResourceWeight": 1})",
       {},
       {{"cpu", 65}, {"memory", 95}},
       {{"cpu", 85}, {"memory", 70}}},
      {"empty weights and no dominant weight take the defaults",
       R"({"resourceWeights": {}})",
       {{"cpu", 1}, {"memory", 1}},
       {{"cpu", 65}, {"memory", 95}},
       {{"cpu", 85}, {"memory", 70}}},
      {"empty thresholds take the defaults",
       R"({"usageThresholds": {}})",
       {{"cpu", 1}, {"memory", 1}},
       {{"cpu", 65}, {"memory", 95}},
       {{"cpu", 85}, {"memory", 70}}},
      {"a null threshold entry is zero",
       R"({"usageThresholds": {"cpu": null}})",
       {{"cpu", 1}, {"memory", 1}},
       {{"cpu", 0}},
       {{"cpu", 85}, {"memory", 70}}},
      {"scaling factors keep configured values and gain cpu/memory",
       R"({"estimatedScalingFactors": {"memory": 50, "nvidia.com/gpu": 100}})",
       {{"cpu", 1}, {"memory", 1}},
       {{"cpu", 65}, {"memory", 95}},
       {{"cpu", 85}, {"memory", 50}, {"nvidia.com/gpu", 100}}},
      {"null fields read as absent",
       R"({"resourceWeights": null, "aggregated": null})",
       {{"cpu", 1}, {"memory", 1}},
       {{"cpu", 65}, {"memory", 95}},
       {{"cpu", 85}, {"memory", 70}}},
  };
  for (const auto& c : cases) {
    SECTION(c.name) {
      auto a = decode(c.json);
      REQUIRE(a.has_value());
      CHECK(a->resource_weights == c.weights);
      CHECK(a->usage_thresholds == c.thresholds);
      CHECK(a->estimated_scaling_factors == c.scaling);
    }
  }
}

TEST_CASE("loadaware args: malformed and invalid args name the field", "[scheduler][loadaware]") {
  struct Case {
    const char* json;
    const char* message;
  };
  const std::vector<Case> cases = {
      {R"([])", "args: expected object, got array"},
      {R"({"usageThreshold": {"cpu": 60}})", "unknown field \"usageThreshold\""},
      {R"({"UsageThresholds": {"cpu": 60}})", "unknown field \"UsageThresholds\""},
      {R"({"aggregated": {"usageThreshold": {}}})", "aggregated: unknown field \"usageThreshold\""},
      {R"({"kind": "NodeResourcesFitArgs"})", "kind: expected \"LoadAwareSchedulingArgs\""},
      {R"({"filterExpiredNodeMetrics": "yes"})", "filterExpiredNodeMetrics: expected boolean"},
      {R"({"dominantResourceWeight": 1.5})", "dominantResourceWeight: expected integer"},
      {R"({"nodeMetricExpirationSeconds": 18446744073709551615})",
       "nodeMetricExpirationSeconds: 18446744073709551615 overflows int64"},
      {R"({"usageThresholds": {"cpu": "65"}})", "usageThresholds[cpu]: expected integer"},
      {R"({"usageThresholds": [65]})", "usageThresholds: expected object"},
      {R"({"supportedResources": "cpu"})", "supportedResources: expected array"},
      {R"({"supportedResources": ["cpu", 1]})", "supportedResources[1]: expected string"},
      {R"({"aggregated": {"usageAggregatedDuration": "5 minutes"}})",
       "aggregated.usageAggregatedDuration: invalid duration \"5 minutes\""},
      {R"({"nodeMetricExpirationSeconds": 0})",
       "nodeMetricExpirationSeconds: Invalid value: 0: should be a positive value"},
      {R"({"resourceWeights": {"cpu": 0}})",
       "resourceWeights[cpu]: Invalid value: 0: should be a positive value"},
      {R"({"resourceWeights": {"cpu": 101}})",
       "resourceWeights[cpu]: Invalid value: 101: should be at most 100"},
      {R"({"dominantResourceWeight": -1})",
       "dominantResourceWeight: Invalid value: -1: should not be negative"},
      {R"({"dominantResourceWeight": 101})",
       "dominantResourceWeight: Invalid value: 101: should be at most 100"},
      {R"({"usageThresholds": {"memory": 101}})",
       "usageThresholds[memory]: Invalid value: 101: should be at most 100"},
      {R"({"usageThresholds": {"cpu": -5}})",
       "usageThresholds[cpu]: Invalid value: -5: should not be negative"},
      {R"({"prodUsageThresholds": {"cpu": 120}})",
       "prodUsageThresholds[cpu]: Invalid value: 120: should be at most 100"},
      {R"({"estimatedScalingFactors": {"cpu": 0}})",
       "estimatedScalingFactors[cpu]: Invalid value: 0: should be a positive value"},
      {R"({"estimatedScalingFactors": {"memory": 150}})",
       "estimatedScalingFactors[memory]: Invalid value: 150: should be at most 100"},
      {R"({"resourceWeights": {"cpu": 1, "nvidia.com/gpu": 1}})",
       "estimatedScalingFactors: Not found: \"nvidia.com/gpu\""},
      {R"({"aggregated": {"usageAggregationType": "p70"}})",
       "aggregated.usageAggregationType: Unsupported value: \"p70\": supported values: \"avg\", "
       "\"p50\", \"p90\", \"p95\", \"p99\""},
      {R"({"aggregated": {"scoreAggregationType": "max"}})",
       "aggregated.scoreAggregationType: Unsupported value: \"max\""},
      {R"({"aggregated": {"scoreAggregatedDuration": "-1m"}})",
       "aggregated.scoreAggregatedDuration: Invalid value: \"-1m0s\": must be >= 0"},
      {R"({"aggregated": {"usageThresholds": {"cpu": 101}}})",
       "aggregated.usageThresholds[cpu]: Invalid value: 101: should be at most 100"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.json);
    auto a = decode(c.json);
    REQUIRE_FALSE(a.has_value());
    CHECK_THAT(a.error().message, Catch::Contains(c.message));
  }
}

TEST_CASE("loadaware args: every validation problem is reported", "[scheduler][loadaware]") {
  auto a = decode(R"({"nodeMetricExpirationSeconds": -1, "dominantResourceWeight": 200})");
  REQUIRE_FALSE(a.has_value());
  CHECK_THAT(a.error().message, Catch::Contains("nodeMetricExpirationSeconds") &&
                                    Catch::Contains("; dominantResourceWeight"));
}
