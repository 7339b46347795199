#include "koord/apis/slo_config.h"

#include <boost/json.hpp>

#include <catch2/catch.hpp>

#include <string>

using namespace koord::apis;
using namespace std::chrono_literals;
namespace json = boost::json;
using koord::kube::Labels;
using ConfigData = std::map<std::string, std::string, std::less<>>;

namespace {

SloControllerConfig parseOk(const ConfigData& data) {
  auto r = parseSloControllerConfig(data);
  if (!r)
    FAIL(r.error().message);
  return std::move(*r);
}

std::string errorOf(const ConfigData& data) {
  auto r = parseSloControllerConfig(data);
  REQUIRE_FALSE(r.has_value());
  return r.error().message;
}

std::string colocationError(const std::string& text) {
  return errorOf({{"colocation-config", text}});
}

ColocationStrategy strategyOf(const std::string& colocation, const Labels& labels = {},
                              const Labels& annotations = {}) {
  auto config = parseOk({{"colocation-config", colocation}});
  return colocationStrategyForNode(config.colocation, labels, annotations);
}

const json::value& at(const json::object& o, std::initializer_list<std::string_view> path) {
  const json::value* cur = nullptr;
  const json::object* obj = &o;
  for (auto key : path) {
    REQUIRE(obj != nullptr);
    cur = obj->if_contains(key);
    if (cur == nullptr)
      FAIL("no " << key << " in " << json::serialize(*obj));
    obj = cur->if_object();
  }
  return *cur;
}

}  // namespace

TEST_CASE("an absent or empty colocation-config resolves to Koordinator's defaults",
          "[apis][slo_config]") {
  for (const char* text : {"", "null", "{}"}) {
    INFO(text);
    ColocationStrategy s = strategyOf(text);
    CHECK_FALSE(s.enable);
    CHECK(s.metric_aggregate_duration_seconds == 300);
    CHECK(s.metric_report_interval_seconds == 60);
    CHECK(s.metric_aggregate_durations == std::vector<std::chrono::seconds>{5min, 10min, 30min});
    CHECK(s.metric_memory_collect_policy == "usageWithoutPageCache");
    CHECK(s.cpu_reclaim_threshold_percent == 60);
    CHECK(s.cpu_calculate_policy == CalculatePolicy::kUsage);
    CHECK(s.memory_reclaim_threshold_percent == 65);
    CHECK(s.memory_calculate_policy == CalculatePolicy::kUsage);
    CHECK(s.degrade_time_minutes == 15);
    CHECK(s.update_time_threshold_seconds == 300);
    CHECK(s.resource_diff_threshold == 0.1);
    CHECK(s.mid_reclaim_mode.empty());
    CHECK(s.mid_cpu_threshold_percent == 100);
    CHECK(s.mid_memory_threshold_percent == 100);
    CHECK(s.mid_unallocated_percent == 0);
    CHECK(s.mid_static_cpu_reserved_percent == 0);
    CHECK(s.mid_static_memory_reserved_percent == 0);
    CHECK_FALSE(s.batch_cpu_threshold_percent);
    CHECK_FALSE(s.batch_memory_threshold_percent);
  }
  // The same defaults as JSON, durations in Go's canonical form.
  json::object d = defaultStrategy(kColocationConfigKey);
  CHECK(at(d, {"metricAggregatePolicy", "durations"}) == json::array{"5m0s", "10m0s", "30m0s"});
  CHECK(at(d, {"cpuCalculatePolicy"}) == "usage");
  CHECK_FALSE(d.contains("batchCPUThresholdPercent"));
  CHECK_FALSE(d.contains("midReclaimMode"));
}

TEST_CASE("the cluster colocation strategy overrides the defaults field by field",
          "[apis][slo_config]") {
  ColocationStrategy s = strategyOf(R"({
    "enable": true,
    "cpuReclaimThresholdPercent": 70,
    "memoryCalculatePolicy": "request",
    "metricAggregatePolicy": {"durations": ["1m", "90s"]},
    "metricMemoryCollectPolicy": "usageWithHotPageCache",
    "resourceDiffThreshold": 0.25,
    "midReclaimMode": "static",
    "midStaticCPUReservedPercent": 20,
    "batchCPUThresholdPercent": 80,
    "somethingNew": {"ignored": true}
  })");
  CHECK(s.enable);
  CHECK(s.cpu_reclaim_threshold_percent == 70);
  CHECK(s.memory_reclaim_threshold_percent == 65);  // untouched
  CHECK(s.memory_calculate_policy == CalculatePolicy::kRequest);
  CHECK(s.metric_aggregate_durations == std::vector<std::chrono::seconds>{60s, 90s});
  CHECK(s.metric_memory_collect_policy == "usageWithHotPageCache");
  CHECK(s.resource_diff_threshold == 0.25);
  CHECK(s.mid_reclaim_mode == "static");
  CHECK(s.mid_static_cpu_reserved_percent == 20);
  REQUIRE(s.batch_cpu_threshold_percent);
  CHECK(*s.batch_cpu_threshold_percent == 80);
  CHECK_FALSE(s.batch_memory_threshold_percent);
  CHECK(s.degrade_time_minutes == 15);

  // What is kept is the normalised JSON: known fields, canonical durations.
  auto config = parseColocationConfig(R"({"metricAggregatePolicy": {"durations": ["90s"]},
                                          "somethingNew": 1, "enable": null})");
  REQUIRE(config.has_value());
  CHECK(config->cluster ==
        json::object{{"metricAggregatePolicy", {{"durations", json::array{"1m30s"}}}}});

  // An empty durations list marshals as nothing in Go, so the defaults stay.
  CHECK(strategyOf(R"({"metricAggregatePolicy": {"durations": []}})").metric_aggregate_durations ==
        std::vector<std::chrono::seconds>{5min, 10min, 30min});
}

TEST_CASE("cpuCalculatePolicy request resolves to usage, as Koordinator computes batch CPU",
          "[apis][slo_config]") {
  CHECK(strategyOf(R"({"cpuCalculatePolicy": "request"})").cpu_calculate_policy ==
        CalculatePolicy::kUsage);
  CHECK(strategyOf(R"({"cpuCalculatePolicy": "maxUsageRequest"})").cpu_calculate_policy ==
        CalculatePolicy::kMaxUsageRequest);
  CHECK(calculatePolicyName(CalculatePolicy::kMaxUsageRequest) == "maxUsageRequest");
  CHECK(calculatePolicyByName("request") == CalculatePolicy::kRequest);
  CHECK_FALSE(calculatePolicyByName("Usage"));
}

TEST_CASE("field names match as Go's encoding/json matches them", "[apis][slo_config]") {
  // No exact match: case-insensitive. Of two keys for one field the later wins.
  CHECK(strategyOf(R"({"CPUReclaimThresholdPercent": 50})").cpu_reclaim_threshold_percent == 50);
  CHECK(strategyOf(R"({"cpuReclaimThresholdPercent": 50, "CPURECLAIMTHRESHOLDPERCENT": 40})")
            .cpu_reclaim_threshold_percent == 40);
  // null is "not set".
  CHECK(strategyOf(R"({"cpuReclaimThresholdPercent": null})").cpu_reclaim_threshold_percent == 60);
}

TEST_CASE("the first nodeConfig whose selector matches is merged over the cluster strategy",
          "[apis][slo_config]") {
  auto config = parseOk({{"colocation-config", R"({
    "enable": true,
    "cpuReclaimThresholdPercent": 70,
    "memoryReclaimThresholdPercent": 75,
    "nodeConfigs": [
      {"name": "alios", "nodeSelector": {"matchLabels": {"kernel": "alios"}},
       "cpuReclaimThresholdPercent": 50},
      {"name": "gpu", "nodeSelector": {"matchExpressions": [
         {"key": "gpu", "operator": "In", "values": ["a100", "h100"]}]},
       "cpuReclaimThresholdPercent": 40, "memoryReclaimThresholdPercent": 45,
       "enable": false}
    ]})"}});
  REQUIRE(config.colocation.node_configs.size() == 2);
  const auto& [profile, fields] = config.colocation.node_configs[1];
  CHECK(profile.name == "gpu");
  CHECK(profile.node_selector.match_expressions.size() == 1);
  CHECK(profile.selector.toString() == "gpu in (a100,h100)");
  // name and nodeSelector are the profile's, not strategy fields.
  CHECK(fields == json::object{{"cpuReclaimThresholdPercent", 40},
                               {"memoryReclaimThresholdPercent", 45},
                               {"enable", false}});

  auto on = [&](const Labels& labels) {
    return colocationStrategyForNode(config.colocation, labels, {});
  };
  ColocationStrategy alios = on({{"kernel", "alios"}});
  CHECK(alios.enable);
  CHECK(alios.cpu_reclaim_threshold_percent == 50);
  CHECK(alios.memory_reclaim_threshold_percent == 75);  // from the cluster strategy

  ColocationStrategy gpu = on({{"gpu", "h100"}});
  CHECK_FALSE(gpu.enable);
  CHECK(gpu.cpu_reclaim_threshold_percent == 40);
  CHECK(gpu.memory_reclaim_threshold_percent == 45);

  // Both match: the first wins, and nothing of the second leaks in.
  ColocationStrategy both = on({{"kernel", "alios"}, {"gpu", "a100"}});
  CHECK(both.cpu_reclaim_threshold_percent == 50);
  CHECK(both.memory_reclaim_threshold_percent == 75);
  CHECK(both.enable);

  ColocationStrategy plain = on({{"kernel", "linux"}});
  CHECK(plain.cpu_reclaim_threshold_percent == 70);
  CHECK(plain.enable);
}

TEST_CASE("a node's annotation and ratio labels override its strategy", "[apis][slo_config]") {
  const std::string cluster = R"({"enable": true, "cpuReclaimThresholdPercent": 70})";
  const std::string anno = "node.koordinator.sh/colocation-strategy";

  ColocationStrategy s = strategyOf(
      cluster, {}, {{anno, R"({"cpuReclaimThresholdPercent": 40, "degradeTimeMinutes": 5})"}});
  CHECK(s.enable);
  CHECK(s.cpu_reclaim_threshold_percent == 40);
  CHECK(s.degrade_time_minutes == 5);

  // Malformed or out-of-range annotations are ignored as a whole.
  CHECK(strategyOf(cluster, {}, {{anno, "{not json"}}).cpu_reclaim_threshold_percent == 70);
  s = strategyOf(cluster, {}, {{anno, R"({"enable": false, "cpuReclaimThresholdPercent": -1})"}});
  CHECK(s.enable);
  CHECK(s.cpu_reclaim_threshold_percent == 70);
  CHECK(strategyOf(cluster, {}, {{anno, "[1]"}}).cpu_reclaim_threshold_percent == 70);
  CHECK(strategyOf(cluster, {}, {{anno, "null"}}).cpu_reclaim_threshold_percent == 70);

  // Labels: a float ratio x100, applied after the annotation.
  s = strategyOf(cluster,
                 {{"node.koordinator.sh/cpu-reclaim-ratio", "0.5"},
                  {"node.koordinator.sh/memory-reclaim-ratio", "0.8"},
                  {"node.koordinator.sh/mid-static-cpu-reserved-ratio", "0.1"},
                  {"node.koordinator.sh/mid-static-memory-reserved-ratio", "0.2"}},
                 {{anno, R"({"cpuReclaimThresholdPercent": 40})"}});
  CHECK(s.cpu_reclaim_threshold_percent == 50);
  CHECK(s.memory_reclaim_threshold_percent == 80);
  CHECK(s.mid_static_cpu_reserved_percent == 10);
  CHECK(s.mid_static_memory_reserved_percent == 20);

  // int64(v * 100) truncates as in Go: 0.29 * 100 is 28.999999999999996.
  CHECK(strategyOf(cluster, {{"node.koordinator.sh/cpu-reclaim-ratio", "0.29"}})
            .cpu_reclaim_threshold_percent == 28);
  CHECK(strategyOf(cluster, {{"node.koordinator.sh/cpu-reclaim-ratio", "1.5"}})
            .cpu_reclaim_threshold_percent == 150);
  CHECK(strategyOf(cluster, {{"node.koordinator.sh/cpu-reclaim-ratio", "+0.3"}})
            .cpu_reclaim_threshold_percent == 30);
  for (const char* bad : {"abc", "-0.1", "", "0.5x", "inf", "nan"}) {
    INFO(bad);
    CHECK(strategyOf(cluster, {{"node.koordinator.sh/cpu-reclaim-ratio", bad}})
              .cpu_reclaim_threshold_percent == 70);
  }
}

TEST_CASE("colocation-config errors name the key and the field", "[apis][slo_config]") {
  CHECK(errorOf({{"colocation-config", R"({"nodeConfigs": [
          {"nodeSelector": {"matchLabels": {"a": "b"}}},
          {"nodeSelector": {"matchLabels": {"c": "d"}}, "cpuReclaimThresholdPercent": -1}]})"}}) ==
        "colocation-config: nodeConfigs[1].cpuReclaimThresholdPercent: must be >= 0");
  CHECK(colocationError(R"({"enable": tru})") ==
        "colocation-config: invalid JSON at line 1 column 12: syntax error");
  CHECK(colocationError("{\n  \"enable\": true,\n}") ==
        "colocation-config: invalid JSON at line 3 column 1: syntax error");
  CHECK(colocationError(R"({"enable": true)") ==
        "colocation-config: invalid JSON at line 1 column 16: incomplete JSON");
  CHECK(colocationError(R"({} {})") ==
        "colocation-config: invalid JSON at line 1 column 4: extra data");
  CHECK(colocationError("[1]") == "colocation-config: expected a JSON object, got array");
  // The single-key parsers leave naming the key to their caller.
  CHECK(parseColocationConfig(R"({"enable": 1})").error().message ==
        "enable: expected boolean, got number");
  CHECK(parseNodeStrategyConfig("cpu-burst-config", R"({"clusterStrategy": {"policy": 1}})")
            .error()
            .message == "clusterStrategy.policy: expected string, got number");
  CHECK(colocationError(R"({"enable": "true"})") ==
        "colocation-config: enable: expected boolean, got string");
  CHECK(colocationError(R"({"cpuReclaimThresholdPercent": 1.5})") ==
        "colocation-config: cpuReclaimThresholdPercent: expected integer, got number");
  CHECK(colocationError(R"({"cpuReclaimThresholdPercent": 60.0})") ==
        "colocation-config: cpuReclaimThresholdPercent: expected integer, got number");
  CHECK(colocationError(R"({"cpuReclaimThresholdPercent": "60"})") ==
        "colocation-config: cpuReclaimThresholdPercent: expected integer, got string");
  CHECK(colocationError(R"({"degradeTimeMinutes": 18446744073709551615})") ==
        "colocation-config: degradeTimeMinutes: 18446744073709551615 overflows int64");
  CHECK(colocationError(R"({"metricReportIntervalSeconds": 0})") ==
        "colocation-config: metricReportIntervalSeconds: must be >= 1");
  CHECK(colocationError(R"({"resourceDiffThreshold": 0})") ==
        "colocation-config: resourceDiffThreshold: must be > 0");
  CHECK(colocationError(R"({"resourceDiffThreshold": 1.5})") ==
        "colocation-config: resourceDiffThreshold: must be <= 1");
  CHECK(colocationError(R"({"midCPUThresholdPercent": 101})") ==
        "colocation-config: midCPUThresholdPercent: must be <= 100");
  CHECK(colocationError(R"({"batchMemoryThresholdPercent": -5})") ==
        "colocation-config: batchMemoryThresholdPercent: must be >= 0");
  CHECK(colocationError(R"({"cpuCalculatePolicy": "bogus"})") ==
        "colocation-config: cpuCalculatePolicy: unsupported value \"bogus\": supported values: "
        "\"usage\", \"request\", \"maxUsageRequest\"");
  CHECK(colocationError(R"({"metricMemoryCollectPolicy": ""})") ==
        "colocation-config: metricMemoryCollectPolicy: unsupported value \"\": supported values: "
        "\"usageWithoutPageCache\", \"usageWithHotPageCache\", \"usageWithPageCache\"");
  CHECK(colocationError(R"({"metricAggregatePolicy": {"durations": ["5m", "5x"]}})") ==
        "colocation-config: metricAggregatePolicy.durations[1]: invalid duration \"5x\"");
  CHECK(colocationError(R"({"metricAggregatePolicy": {"durations": [300]}})") ==
        "colocation-config: metricAggregatePolicy.durations[0]: expected duration string, got "
        "number");
  CHECK(colocationError(R"({"metricAggregatePolicy": []})") ==
        "colocation-config: metricAggregatePolicy: expected object, got array");
  CHECK(colocationError(R"({"extensions": 3})") ==
        "colocation-config: extensions: expected object, got number");
  CHECK(colocationError(R"({"nodeConfigs": {}})") ==
        "colocation-config: nodeConfigs: expected array, got object");
  CHECK(colocationError(R"({"nodeConfigs": [3]})") ==
        "colocation-config: nodeConfigs[0]: expected object, got number");
}

TEST_CASE("nodeConfigs and nodeStrategies need a valid, non-empty nodeSelector",
          "[apis][slo_config]") {
  CHECK(colocationError(R"({"nodeConfigs": [{"name": "a", "enable": true}]})") ==
        "colocation-config: nodeConfigs[0].nodeSelector: required, with matchLabels or "
        "matchExpressions");
  CHECK(colocationError(R"({"nodeConfigs": [{"name": "a", "nodeSelector": null}]})") ==
        "colocation-config: nodeConfigs[0].nodeSelector: required, with matchLabels or "
        "matchExpressions");
  CHECK(colocationError(R"({"nodeConfigs": [{"name": "a", "nodeSelector": {}}]})") ==
        "colocation-config: nodeConfigs[0].nodeSelector: must not be empty: set matchLabels or "
        "matchExpressions");
  CHECK(colocationError(R"({"nodeConfigs": [{"nodeSelector": {"matchLabels": []}}]})") ==
        "colocation-config: nodeConfigs[0].nodeSelector.matchLabels: expected object, got array");
  CHECK(colocationError(R"({"nodeConfigs": [{"name": 7, "nodeSelector": {}}]})") ==
        "colocation-config: nodeConfigs[0].name: expected string, got number");
  CHECK(colocationError(
            R"({"nodeConfigs": [{"nodeSelector": {"matchExpressions": [
               {"key": "a", "operator": "Near", "values": ["b"]}]}}]})") ==
        "colocation-config: nodeConfigs[0].nodeSelector.matchExpressions[0].operator: "
        "unsupported value \"Near\": supported values: \"DoesNotExist\", \"Exists\", \"In\", "
        "\"NotIn\"");
  auto bad_key =
      colocationError(R"({"nodeConfigs": [{"nodeSelector": {"matchLabels": {"bad key": "x"}}}]})");
  CHECK_THAT(bad_key, Catch::StartsWith("colocation-config: nodeConfigs[0].nodeSelector: "
                                        "matchLabels: "));
  CHECK_THAT(bad_key, Catch::Contains("bad key"));
  CHECK(errorOf({{"cpu-burst-config", R"({"nodeStrategies": [{"name": "x"}]})"}}) ==
        "cpu-burst-config: nodeStrategies[0].nodeSelector: required, with matchLabels or "
        "matchExpressions");
}

TEST_CASE("node-strategy keys: ranges, types and ordered pairs", "[apis][slo_config]") {
  CHECK(errorOf({{"resource-threshold-config",
                  R"({"clusterStrategy": {"cpuSuppressThresholdPercent": 101}})"}}) ==
        "resource-threshold-config: clusterStrategy.cpuSuppressThresholdPercent: must be <= 100");
  CHECK(errorOf({{"resource-threshold-config",
                  R"({"clusterStrategy": {"memoryEvictThresholdPercent": 60,
                                          "memoryEvictLowerPercent": 65}})"}}) ==
        "resource-threshold-config: clusterStrategy.memoryEvictThresholdPercent: must be greater "
        "than memoryEvictLowerPercent");
  CHECK(errorOf({{"resource-threshold-config",
                  R"({"nodeStrategies": [{"nodeSelector": {"matchLabels": {"a": "b"}},
                      "cpuEvictBESatisfactionUpperPercent": 50,
                      "cpuEvictBESatisfactionLowerPercent": 50}]})"}}) ==
        "resource-threshold-config: nodeStrategies[0].cpuEvictBESatisfactionUpperPercent: must be "
        "greater than cpuEvictBESatisfactionLowerPercent");
  CHECK(errorOf({{"resource-threshold-config",
                  R"({"clusterStrategy": {"evictEnabledPriorityThreshold": 3000000000}})"}}) ==
        "resource-threshold-config: clusterStrategy.evictEnabledPriorityThreshold: 3000000000 "
        "overflows int32");
  CHECK(errorOf({{"resource-threshold-config",
                  R"({"clusterStrategy": {"allocatableEvictPriorityThreshold": 9000}})"}}) ==
        "resource-threshold-config: clusterStrategy.allocatableEvictPriorityThreshold: must be "
        "<= 7999");
  CHECK(errorOf({{"resource-threshold-config",
                  R"({"clusterStrategy": {"cpuEvictTimeWindowSeconds": 0}})"}}) ==
        "resource-threshold-config: clusterStrategy.cpuEvictTimeWindowSeconds: must be > 0");
  CHECK(errorOf({{"resource-threshold-config", R"({"clusterStrategy": []})"}}) ==
        "resource-threshold-config: clusterStrategy: expected object, got array");
  CHECK(errorOf({{"resource-qos-config",
                  R"({"nodeStrategies": [{"nodeSelector": {"matchLabels": {"a": "b"}},
                      "beClass": {"cpuQOS": {"groupIdentity": 3}}}]})"}}) ==
        "resource-qos-config: nodeStrategies[0].beClass.cpuQOS.groupIdentity: must be <= 2");
  CHECK(errorOf({{"resource-qos-config",
                  R"({"clusterStrategy": {"lsClass": {"memoryQOS": {"wmarkMinAdj": -26}}}})"}}) ==
        "resource-qos-config: clusterStrategy.lsClass.memoryQOS.wmarkMinAdj: must be >= -25");
  CHECK(errorOf({{"resource-qos-config",
                  R"({"clusterStrategy": {"beClass": {"resctrlQOS":
                      {"catRangeStartPercent": 50, "catRangeEndPercent": 30}}}})"}}) ==
        "resource-qos-config: clusterStrategy.beClass.resctrlQOS.catRangeEndPercent: must be "
        "greater than catRangeStartPercent");
  CHECK(
      errorOf({{"resource-qos-config",
                R"({"clusterStrategy": {"lsClass": {"networkQOS": {"ingressRequest": 150}}}})"}}) ==
      "resource-qos-config: clusterStrategy.lsClass.networkQOS.ingressRequest: must be a "
      "percentage in 0-100 or a quantity such as \"50M\"");
  CHECK(errorOf({{"resource-qos-config", R"({"clusterStrategy": {"lsClass": {"networkQOS":
                      {"egressLimit": 1.5}}}})"}}) ==
        "resource-qos-config: clusterStrategy.lsClass.networkQOS.egressLimit: expected integer "
        "or string, got number");
  CHECK_THAT(
      errorOf({{"resource-qos-config", R"({"clusterStrategy": {"lsClass": {"networkQOS":
                          {"egressLimit": "fifty"}}}})"}}),
      Catch::StartsWith("resource-qos-config: clusterStrategy.lsClass.networkQOS.egressLimit: "));
  CHECK(errorOf({{"cpu-burst-config", R"({"clusterStrategy": {"cfsQuotaBurstPercent": 99}})"}}) ==
        "cpu-burst-config: clusterStrategy.cfsQuotaBurstPercent: must be >= 100");
  CHECK(errorOf({{"cpu-burst-config", R"({"clusterStrategy": {"cpuBurstPercent": 0}})"}}) ==
        "cpu-burst-config: clusterStrategy.cpuBurstPercent: must be >= 1");
  CHECK(errorOf({{"system-config", R"({"clusterStrategy": {"watermarkScaleFactor": 0}})"}}) ==
        "system-config: clusterStrategy.watermarkScaleFactor: must be > 0");
  CHECK(errorOf({{"system-config", R"({"clusterStrategy": {"watermarkScaleFactor": 401}})"}}) ==
        "system-config: clusterStrategy.watermarkScaleFactor: must be <= 400");
  CHECK(errorOf({{"system-config", R"({"clusterStrategy": {"schedFeatures": {"A": 1}}})"}}) ==
        "system-config: clusterStrategy.schedFeatures.A: expected boolean, got number");
  CHECK_THAT(
      errorOf({{"system-config", R"({"clusterStrategy": {"totalNetworkBandwidth": "10x"}})"}}),
      Catch::StartsWith("system-config: clusterStrategy.totalNetworkBandwidth"));

  // The first bad key in the fixed order is reported; other keys are not this parser's.
  CHECK(errorOf({{"cpu-burst-config", "{"}, {"system-config", "{"}}) ==
        "cpu-burst-config: invalid JSON at line 1 column 2: incomplete JSON");
  CHECK(parseSloControllerConfig({{"cpu-normalization-config", "{"}, {"other", "x"}}).has_value());
  CHECK_FALSE(parseNodeStrategyConfig("colocation-config", "{}").has_value());
  CHECK(parseNodeStrategyConfig("bogus", "{}").error().message ==
        "bogus is not a clusterStrategy/nodeStrategies key");
}

TEST_CASE("NodeSLO spec: defaults, cluster and node strategies merged as Koordinator merges",
          "[apis][slo_config]") {
  SECTION("nothing configured: Koordinator's default strategies") {
    json::object spec = nodeSLOSpec(parseOk({}), {{"any", "node"}});
    CHECK(spec.size() == 4);
    CHECK(spec.at("resourceUsedThresholdWithBE") ==
          json::object{{"enable", false},
                       {"cpuSuppressThresholdPercent", 65},
                       {"cpuSuppressPolicy", "cpuset"},
                       {"memoryEvictThresholdPercent", 70},
                       {"cpuEvictPolicy", "evictByRealLimit"}});
    CHECK(spec.at("cpuBurstStrategy") == json::object{{"policy", "none"},
                                                      {"cpuBurstPercent", 1000},
                                                      {"cfsQuotaBurstPercent", 300},
                                                      {"cfsQuotaBurstPeriodSeconds", -1},
                                                      {"sharePoolThresholdPercent", 50}});
    CHECK(spec.at("systemStrategy") == json::object{{"totalNetworkBandwidth", "0"}});
    const json::object& qos = spec.at("resourceQOSStrategy").as_object();
    CHECK(qos.size() == 6);
    CHECK(at(qos, {"policies", "cpuPolicy"}) == "groupIdentity");
    CHECK(at(qos, {"policies", "netQOSPolicy"}) == "tc");
    CHECK(at(qos, {"lsrClass", "cpuQOS"}) ==
          json::object{
              {"enable", false}, {"groupIdentity", 2}, {"schedIdle", 0}, {"coreExpeller", true}});
    CHECK(at(qos, {"beClass", "cpuQOS", "groupIdentity"}) == -1);
    CHECK(at(qos, {"beClass", "resctrlQOS", "catRangeEndPercent"}) == 30);
    CHECK(at(qos, {"beClass", "memoryQOS", "wmarkMinAdj"}) == 50);
    CHECK(at(qos, {"lsClass", "memoryQOS", "wmarkMinAdj"}) == -25);
    CHECK(at(qos, {"lsClass", "memoryQOS", "wmarkRatio"}) == 95);
    CHECK(at(qos, {"systemClass", "memoryQOS", "wmarkScalePermill"}) == 50);
    CHECK(at(qos, {"systemClass", "networkQOS", "ingressLimit"}) == 0);
    CHECK(at(qos, {"cgroupRoot"}) == json::object{{"blkioQOS", {{"enable", false}}}});
    CHECK(spec.at("resourceQOSStrategy") == json::value(defaultStrategy(kResourceQOSConfigKey)));
  }

  SECTION("cluster over defaults, then the first matching node strategy over that") {
    auto config = parseOk({
        {"resource-threshold-config", R"({
          "clusterStrategy": {"enable": true, "cpuSuppressThresholdPercent": 60,
                              "cpuSuppressPolicy": ""},
          "nodeStrategies": [
            {"name": "hot", "nodeSelector": {"matchLabels": {"pool": "hot"}},
             "cpuSuppressThresholdPercent": 50, "cpuSuppressPolicy": "cfsQuota"},
            {"name": "hot-too", "nodeSelector": {"matchLabels": {"zone": "z1"}},
             "cpuSuppressThresholdPercent": 40}
          ]})"},
        {"resource-qos-config", R"({
          "clusterStrategy": {"beClass": {"cpuQOS": {"enable": true},
                              "blkioQOS": {"blocks": [{"name": "/dev/sda", "type": "device",
                                                        "ioCfg": {"readIOPS": 100}}]}}},
          "nodeStrategies": [
            {"name": "be", "nodeSelector": {"matchLabels": {"pool": "hot"}},
             "beClass": {"cpuQOS": {"groupIdentity": 0},
                         "blkioQOS": {"blocks": [{"name": "vg0", "type": "volumegroup"}]}}}
          ]})"},
        {"cpu-burst-config", R"({"clusterStrategy": {"policy": "auto"}})"},
        {"system-config", R"({
          "clusterStrategy": {"totalNetworkBandwidth": "1000M", "schedFeatures": {"A": true}},
          "nodeStrategies": [
            {"name": "n", "nodeSelector": {"matchLabels": {"pool": "hot"}},
             "minFreeKbytesFactor": 100, "schedFeatures": {"B": false}}
          ]})"},
    });

    json::object cold = nodeSLOSpec(config, {{"pool", "cold"}});
    const json::object& cold_threshold = cold.at("resourceUsedThresholdWithBE").as_object();
    CHECK(cold_threshold.at("enable") == true);
    CHECK(cold_threshold.at("cpuSuppressThresholdPercent") == 60);
    // A Go string with omitempty: "" marshals as nothing, so the default stays.
    CHECK(cold_threshold.at("cpuSuppressPolicy") == "cpuset");
    CHECK(cold_threshold.at("memoryEvictThresholdPercent") == 70);
    CHECK(at(cold.at("resourceQOSStrategy").as_object(), {"beClass", "cpuQOS"}) ==
          json::object{
              {"enable", true}, {"groupIdentity", -1}, {"schedIdle", 0}, {"coreExpeller", false}});
    CHECK(cold.at("cpuBurstStrategy").at("policy") == "auto");
    CHECK(cold.at("cpuBurstStrategy").at("cpuBurstPercent") == 1000);
    // Quantities in canonical form.
    CHECK(cold.at("systemStrategy") ==
          json::object{{"totalNetworkBandwidth", "1G"}, {"schedFeatures", {{"A", true}}}});

    json::object hot = nodeSLOSpec(config, {{"pool", "hot"}, {"zone", "z1"}});
    const json::object& hot_threshold = hot.at("resourceUsedThresholdWithBE").as_object();
    CHECK(hot_threshold.at("enable") == true);                     // cluster
    CHECK(hot_threshold.at("cpuSuppressThresholdPercent") == 50);  // first match only
    CHECK(hot_threshold.at("cpuSuppressPolicy") == "cfsQuota");
    CHECK_FALSE(hot_threshold.contains("name"));
    CHECK_FALSE(hot_threshold.contains("nodeSelector"));
    const json::object& hot_qos = hot.at("resourceQOSStrategy").as_object();
    // Structs merge field by field; lists are replaced whole.
    CHECK(at(hot_qos, {"beClass", "cpuQOS", "enable"}) == true);
    CHECK(at(hot_qos, {"beClass", "cpuQOS", "groupIdentity"}) == 0);
    CHECK(at(hot_qos, {"beClass", "blkioQOS"}) ==
          json::object{{"enable", false},
                       {"blocks", json::array{{{"name", "vg0"}, {"type", "volumegroup"}}}}});
    CHECK(at(cold.at("resourceQOSStrategy").as_object(), {"beClass", "blkioQOS", "blocks"}) ==
          json::array{{{"name", "/dev/sda"}, {"type", "device"}, {"ioCfg", {{"readIOPS", 100}}}}});
    // Maps merge key by key.
    CHECK(hot.at("systemStrategy") == json::object{{"totalNetworkBandwidth", "1G"},
                                                   {"schedFeatures", {{"A", true}, {"B", false}}},
                                                   {"minFreeKbytesFactor", 100}});

    json::object z1 = nodeSLOSpec(config, {{"zone", "z1"}});
    CHECK(z1.at("resourceUsedThresholdWithBE").at("cpuSuppressThresholdPercent") == 40);
    CHECK(z1.at("resourceUsedThresholdWithBE").at("cpuSuppressPolicy") == "cpuset");
  }

  SECTION("strategyForNode and defaultStrategy for a key of no strategy") {
    CHECK(defaultStrategy("host-application-config").empty());
    CHECK(strategyForNode("host-application-config", {}, {}).empty());
  }
}

TEST_CASE("the webhook's profile checks: names and overlapping selectors", "[apis][slo_config]") {
  auto entries = [](const std::string& text) {
    auto r = parseNodeStrategyConfig("cpu-burst-config", text);
    if (!r)
      FAIL(r.error().message);
    return r->node_strategies;
  };
  auto disjoint = entries(R"({"nodeStrategies": [
      {"name": "a", "nodeSelector": {"matchLabels": {"pool": "a"}}},
      {"name": "b", "nodeSelector": {"matchExpressions": [
         {"key": "pool", "operator": "In", "values": ["b", "c"]}]}}]})");
  CHECK(checkNodeProfiles("nodeStrategies", disjoint, true).has_value());

  auto overlapping = entries(R"({"nodeStrategies": [
      {"name": "a", "nodeSelector": {"matchLabels": {"pool": "a"}}},
      {"name": "b", "nodeSelector": {"matchLabels": {"pool": "a", "gpu": "true"}}}]})");
  auto r = checkNodeProfiles("nodeStrategies", overlapping, false);
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().message ==
        "nodeStrategies[0] and nodeStrategies[1]: nodeSelectors overlap (both select a node "
        "labelled gpu=true,pool=a)");

  auto by_expression = entries(R"({"nodeStrategies": [
      {"name": "a", "nodeSelector": {"matchExpressions": [
         {"key": "pool", "operator": "In", "values": ["x", "y"]}]}},
      {"name": "b", "nodeSelector": {"matchLabels": {"pool": "y"}}}]})");
  CHECK_FALSE(checkNodeProfiles("nodeStrategies", by_expression, false).has_value());

  auto unnamed = entries(R"({"nodeStrategies": [
      {"nodeSelector": {"matchLabels": {"pool": "a"}}}]})");
  CHECK(checkNodeProfiles("nodeStrategies", unnamed, false).has_value());
  CHECK(checkNodeProfiles("nodeStrategies", unnamed, true).error().message ==
        "nodeStrategies[0].name: required");

  auto same_name = entries(R"({"nodeStrategies": [
      {"name": "a", "nodeSelector": {"matchLabels": {"pool": "a"}}},
      {"name": "a", "nodeSelector": {"matchLabels": {"pool": "b"}}}]})");
  CHECK(checkNodeProfiles("nodeStrategies", same_name, false).has_value());
  CHECK(checkNodeProfiles("nodeStrategies", same_name, true).error().message ==
        "nodeStrategies[1].name: duplicate name \"a\"");
}

TEST_CASE("ConfigMap values, node annotations and labels longer than Kubernetes allows",
          "[apis][slo_config]") {
  // Valid JSON padded with spaces: refused by size alone, before it is parsed.
  const std::string padded = R"({"enable": true)" + std::string(1024 * 1024, ' ') + "}";
  CHECK_THAT(colocationError(padded), Catch::StartsWith("colocation-config: value: ") &&
                                          Catch::Contains("more than the 1048576 allowed"));
  auto burst = parseNodeStrategyConfig("cpu-burst-config", padded);
  REQUIRE_FALSE(burst.has_value());
  CHECK_THAT(burst.error().message, Catch::Contains("more than the 1048576 allowed"));

  const std::string cluster = R"({"enable": true, "cpuReclaimThresholdPercent": 70})";
  const std::string anno = "node.koordinator.sh/colocation-strategy";
  const std::string big_anno =
      R"({"cpuReclaimThresholdPercent": 40)" + std::string(256 * 1024, ' ') + "}";
  CHECK(strategyOf(cluster, {}, {{anno, big_anno}}).cpu_reclaim_threshold_percent == 70);
  // A ratio label longer than a label value may be: ignored, though it reads as 0.5.
  const std::string long_ratio = "0.5" + std::string(61, '0');
  CHECK(strategyOf(cluster, {{"node.koordinator.sh/cpu-reclaim-ratio", long_ratio}})
            .cpu_reclaim_threshold_percent == 70);
  CHECK(strategyOf(cluster, {{"node.koordinator.sh/cpu-reclaim-ratio", long_ratio.substr(1)}})
            .cpu_reclaim_threshold_percent == 50);
}
