#include "koord/apis/node_metric.h"

#include <boost/json.hpp>

#include <catch2/catch.hpp>

#include "koord/kube/time.h"

using namespace koord::apis;
using koord::kube::Quantity;

namespace {

Quantity q(std::string_view text) {
  return Quantity::parse(text).value();
}

koord::kube::Expected<NodeMetric> decode(std::string_view text) {
  return decodeNodeMetric(boost::json::parse(text));
}

std::string errorOf(const koord::kube::Expected<NodeMetric>& r) {
  REQUIRE_FALSE(r.has_value());
  return r.error().message;
}

}  // namespace

TEST_CASE("NodeMetric decodes as the koordlet writes it", "[apis][nodemetric]") {
  auto m = decode(R"({
    "apiVersion":"slo.koordinator.sh/v1alpha1","kind":"NodeMetric",
    "metadata":{"name":"node-1","resourceVersion":"42"},
    "spec":{"metricCollectPolicy":{"aggregateDurationSeconds":300,"reportIntervalSeconds":60,
      "nodeAggregatePolicy":{"durations":["5m0s","10m0s","30m0s"]},
      "nodeMemoryCollectPolicy":"usageWithoutPageCache"}},
    "status":{
      "updateTime":"2024-05-01T09:59:30.123456Z",
      "nodeMetric":{
        "nodeUsage":{"resources":{"cpu":"5200m","memory":"20Gi"}},
        "systemUsage":{"resources":{"cpu":"700m","memory":"2Gi"}},
        "aggregatedNodeUsages":[{"usage":{
            "avg":{"resources":{"cpu":"5","memory":"19Gi"}},
            "p90":{"resources":{"cpu":"6","memory":"21Gi"}}},
          "duration":"5m0s"}]},
      "podsMetric":[
        {"namespace":"default","name":"web","podUsage":{"resources":{"cpu":"1500m","memory":"4Gi"}},
         "priority":"koord-prod","qos":"LS"},
        null,
        {"namespace":"default","name":"spark","podUsage":{"resources":{"cpu":"2","memory":"8Gi"}},
         "priority":"koord-batch","qos":"BE","extensions":{"x":1}}],
      "hostApplicationMetric":[{"name":"nginx","usage":{"resources":{"cpu":"300m","memory":"1Gi"}},
        "priority":"koord-prod","qos":"LS"}],
      "prodReclaimableMetric":{"resource":{"resources":{"cpu":"3","memory":"6Gi"}}}}})");
  REQUIRE(m.has_value());
  CHECK(m->name == "node-1");
  REQUIRE(m->collect_policy.has_value());
  CHECK(m->collect_policy->aggregate_duration_seconds == 300);
  CHECK(m->collect_policy->report_interval_seconds == 60);
  REQUIRE(m->collect_policy->node_aggregate_durations.has_value());
  CHECK(m->collect_policy->node_aggregate_durations->size() == 3);
  CHECK(m->collect_policy->node_aggregate_durations->at(2) == std::chrono::minutes(30));
  CHECK(m->collect_policy->node_memory_collect_policy == "usageWithoutPageCache");

  REQUIRE(m->update_time.has_value());
  CHECK(*m->update_time == *koord::kube::parseTime("2024-05-01T09:59:30.123456Z"));
  REQUIRE(m->node_metric.has_value());
  CHECK(m->node_metric->node_usage.at("cpu") == q("5200m"));
  CHECK(m->node_metric->system_usage.at("memory") == q("2Gi"));
  REQUIRE(m->node_metric->aggregated_node_usages.size() == 1);
  const auto& agg = m->node_metric->aggregated_node_usages[0];
  CHECK(agg.duration == std::chrono::minutes(5));
  CHECK(agg.usage.at("p90").at("memory") == q("21Gi"));
  CHECK(agg.usage.at("avg").at("cpu") == q("5"));

  REQUIRE(m->pods_metric.size() == 2);  // the null entry is skipped
  CHECK(m->pods_metric[0].namespace_ == "default");
  CHECK(m->pods_metric[0].name == "web");
  CHECK(m->pods_metric[0].pod_usage.at("cpu") == q("1500m"));
  CHECK(m->pods_metric[0].priority == PriorityClass::kProd);
  CHECK(m->pods_metric[0].qos == QoSClass::kLS);
  CHECK(m->pods_metric[1].priority == PriorityClass::kBatch);
  CHECK(m->pods_metric[1].qos == QoSClass::kBE);

  REQUIRE(m->host_application_metric.size() == 1);
  CHECK(m->host_application_metric[0].name == "nginx");
  CHECK(m->host_application_metric[0].usage.at("memory") == q("1Gi"));
  CHECK(m->host_application_metric[0].priority == PriorityClass::kProd);
  REQUIRE(m->prod_reclaimable.has_value());
  CHECK(m->prod_reclaimable->at("cpu") == q("3"));
}

TEST_CASE("NodeMetric without a status is a metric never reported", "[apis][nodemetric]") {
  auto m = decode(R"({"metadata":{"name":"n"},"status":null})");
  REQUIRE(m.has_value());
  CHECK_FALSE(m->update_time.has_value());
  CHECK_FALSE(m->node_metric.has_value());
  CHECK(m->pods_metric.empty());
  CHECK_FALSE(m->collect_policy.has_value());

  auto partial = decode(R"({"status":{"updateTime":"2024-05-01T10:00:00+02:00",
    "podsMetric":[{"name":"x","priority":"something-new"}]}})");
  REQUIRE(partial.has_value());
  CHECK(*partial->update_time == *koord::kube::parseTime("2024-05-01T08:00:00Z"));
  REQUIRE(partial->pods_metric.size() == 1);
  CHECK(partial->pods_metric[0].priority == PriorityClass::kNone);
  CHECK(partial->pods_metric[0].pod_usage.empty());
}

TEST_CASE("NodeMetric errors name the field", "[apis][nodemetric]") {
  CHECK(errorOf(decode(R"(1)")) == "NodeMetric: expected object, got number");
  CHECK(errorOf(decode(R"({"status":{"updateTime":"yesterday"}})")) ==
        "status.updateTime: invalid RFC 3339 time \"yesterday\"");
  CHECK(errorOf(decode(R"({"status":{"updateTime":5}})")) ==
        "status.updateTime: expected RFC 3339 time string, got number");
  CHECK_THAT(errorOf(decode(R"({"status":{"podsMetric":[{},
      {"podUsage":{"resources":{"cpu":"fast"}}}]}})")),
             Catch::StartsWith("status.podsMetric[1].podUsage.resources[cpu]: "));
  CHECK(errorOf(decode(R"({"status":{"podsMetric":{}}})")) ==
        "status.podsMetric: expected array, got object");
  CHECK(errorOf(decode(R"({"status":{"podsMetric":[7]}})")) ==
        "status.podsMetric[0]: expected object, got number");
  CHECK(errorOf(decode(R"({"status":{"podsMetric":[{"priority":9500}]}})")) ==
        "status.podsMetric[0].priority: expected string, got number");
  CHECK(errorOf(decode(R"({"status":{"nodeMetric":{"aggregatedNodeUsages":[
      {"duration":"5 minutes"}]}}})")) ==
        "status.nodeMetric.aggregatedNodeUsages[0].duration: invalid duration \"5 minutes\"");
  CHECK(errorOf(decode(R"({"status":{"nodeMetric":{"systemUsage":[]}}})")) ==
        "status.nodeMetric.systemUsage: expected object, got array");
  CHECK_THAT(errorOf(decode(R"({"status":{"hostApplicationMetric":[
      {"usage":{"resources":{"memory":"1Q"}}}]}})")),
             Catch::StartsWith("status.hostApplicationMetric[0].usage.resources[memory]: "));
  CHECK(errorOf(decode(R"({"spec":{"metricCollectPolicy":{"reportIntervalSeconds":"60"}}})")) ==
        "spec.metricCollectPolicy.reportIntervalSeconds: expected int64, got string");
  CHECK(errorOf(decode(R"({"spec":{"metricCollectPolicy":{"nodeAggregatePolicy":
      {"durations":["5m",3]}}}})")) ==
        "spec.metricCollectPolicy.nodeAggregatePolicy.durations[1]: expected duration string, "
        "got number");
  CHECK(errorOf(decode(R"({"metadata":{"name":["n"]}})")) ==
        "metadata.name: expected string, got array");
  CHECK_THAT(errorOf(decode(R"({"status":{"prodReclaimableMetric":{"resource":
      {"resources":{"cpu":true}}}}})")),
             Catch::StartsWith("status.prodReclaimableMetric.resource.resources[cpu]: "));
}
