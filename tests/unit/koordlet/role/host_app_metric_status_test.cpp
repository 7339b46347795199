#include <boost/json.hpp>

#include <catch2/catch.hpp>

#include "catch_expected.h"
#include "koord/apis/node_metric.h"
#include "statesinformer/node_metric_status.h"

using namespace koord::roles::koordlet;
namespace json = boost::json;
namespace mc = koord::roles::koordlet::metriccache;
using koord::apis::PriorityClass;
using koord::apis::QoSClass;
using namespace std::chrono_literals;

namespace {

HostApplication app(std::string name, QoSClass qos, PriorityClass priority) {
  HostApplication a;
  a.name = std::move(name);
  a.qos = qos;
  a.priority = priority;
  return a;
}

}  // namespace

TEST_CASE("status: hostApplicationMetric by name with usage, priority and QoS") {
  mc::MetricCache cache;
  const mc::TimePoint now{std::chrono::seconds(1'800'000'000)};
  for (int s = 60; s >= 0; --s) {
    auto t = now - std::chrono::seconds(s);
    REQUIRE(cache.append(mc::MetricKind::kHostAppCPUUsage, "nginx", t, 0.3));
    REQUIRE(cache.append(mc::MetricKind::kHostAppMemoryUsage, "nginx", t, 1.0 * (1 << 30)));
    REQUIRE(cache.append(mc::MetricKind::kHostAppCPUUsage, "alpha", t, 0.1));
    REQUIRE(cache.append(mc::MetricKind::kHostAppMemoryUsage, "alpha", t, 64.0 * (1 << 20)));
  }
  // A sample outside the 300 s window does not count.
  REQUIRE(cache.append(mc::MetricKind::kHostAppCPUUsage, "stale", now - 400s, 2.0));
  REQUIRE(cache.append(mc::MetricKind::kHostAppMemoryUsage, "stale", now - 400s, 1.0));
  std::vector<HostApplication> apps{app("nginx", QoSClass::kLS, PriorityClass::kProd),
                                    app("idle", QoSClass::kLS, PriorityClass::kProd),
                                    app("stale", QoSClass::kBE, PriorityClass::kBatch),
                                    app("alpha", QoSClass::kBE, PriorityClass::kBatch),
                                    app("bare", QoSClass::kNone, PriorityClass::kNone)};
  REQUIRE(cache.append(mc::MetricKind::kHostAppCPUUsage, "bare", now, 0.002));
  REQUIRE(cache.append(mc::MetricKind::kHostAppMemoryUsage, "bare", now, 4096));
  auto status = buildNodeMetricStatus(cache, {}, NodeMetricCollectSettings{}, now, apps);

  // Sorted by name; apps without samples in the window are left out.
  const auto& am = status.at("hostApplicationMetric").as_array();
  REQUIRE(am.size() == 3);
  CHECK(am[0].at("name") == "alpha");
  CHECK(am[0].at("usage").at("resources").at("cpu") == "100m");
  CHECK(am[0].at("usage").at("resources").at("memory") == "64Mi");
  CHECK(am[0].at("qos") == "BE");
  CHECK(am[0].at("priority") == "koord-batch");
  CHECK(am[1].at("name") == "bare");
  CHECK_FALSE(am[1].as_object().contains("qos"));  // kNone is omitted, as Go's omitempty does
  CHECK_FALSE(am[1].as_object().contains("priority"));
  CHECK(am[2].at("name") == "nginx");
  CHECK(am[2].at("usage").at("resources").at("cpu") == "300m");

  // The manager's decoder reads what the koordlet writes.
  json::value nm = json::object{{"metadata", {{"name", "node-a"}}}, {"status", status}};
  auto decoded = koord::apis::decodeNodeMetric(nm);
  REQUIRE(decoded);
  REQUIRE(decoded->host_application_metric.size() == 3);
  const auto& nginx = decoded->host_application_metric[2];
  CHECK(nginx.name == "nginx");
  CHECK(nginx.priority == PriorityClass::kProd);
  CHECK(nginx.qos == QoSClass::kLS);
  CHECK(nginx.usage.at("cpu").milliValue() == 300);
  CHECK(nginx.usage.at("memory").value() == (std::int64_t{1} << 30));
}

TEST_CASE("status: no host applications is an empty list, so a merge patch clears old ones") {
  mc::MetricCache cache;
  auto status = buildNodeMetricStatus(cache, {}, NodeMetricCollectSettings{},
                                      mc::TimePoint{std::chrono::seconds(1'800'000'000)});
  REQUIRE(status.contains("hostApplicationMetric"));
  CHECK(status.at("hostApplicationMetric").as_array().empty());
}
