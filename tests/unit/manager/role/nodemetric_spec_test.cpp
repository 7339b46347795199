#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include "nodemetric/nodemetric_spec.h"

TEST_CASE("NodeMetric spec carries the colocation strategy's collect policy", "[nodemetric]") {
  koord::apis::ColocationStrategy s;
  auto spec = koord::roles::manager::nodeMetricSpec(s);
  CHECK(boost::json::serialize(spec) ==
        R"({"metricCollectPolicy":{"aggregateDurationSeconds":300,"reportIntervalSeconds":60,)"
        R"("nodeAggregatePolicy":{"durations":["5m0s","10m0s","30m0s"]},)"
        R"("nodeMemoryCollectPolicy":"usageWithoutPageCache"}})");
  s.metric_aggregate_duration_seconds = 120;
  s.metric_report_interval_seconds = 30;
  s.metric_aggregate_durations = {std::chrono::seconds(90)};
  s.metric_memory_collect_policy = "usageWithPageCache";
  spec = koord::roles::manager::nodeMetricSpec(s);
  const auto& p = spec.at("metricCollectPolicy");
  CHECK(p.at("aggregateDurationSeconds") == 120);
  CHECK(p.at("reportIntervalSeconds") == 30);
  CHECK(p.at("nodeAggregatePolicy").at("durations") == boost::json::array{"1m30s"});
  CHECK(p.at("nodeMemoryCollectPolicy") == "usageWithPageCache");
}
