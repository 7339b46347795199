#include <boost/json.hpp>

#include <catch2/catch.hpp>

#include "koord/kube/time.h"
#include "statesinformer/node_metric_status.h"

using namespace koord::roles::koordlet;
namespace json = boost::json;
namespace mc = koord::roles::koordlet::metriccache;
using namespace std::chrono_literals;

namespace {

PodMeta pod(std::string ns, std::string name, std::string uid, koord::apis::QoSClass qos,
            koord::apis::PriorityClass prio) {
  PodMeta p;
  p.namespace_ = std::move(ns);
  p.name = std::move(name);
  p.uid = std::move(uid);
  p.qos = qos;
  p.priority = prio;
  p.phase = PodPhase::kRunning;
  return p;
}

std::string cpuOf(const json::value& resource_map) {
  return std::string(resource_map.at("resources").at("cpu").as_string());
}

}  // namespace

TEST_CASE("status: averages over the window, aggregated only for covered durations, pods") {
  mc::MetricCache cache;
  const mc::TimePoint now{std::chrono::seconds(1'800'000'000)};
  // 12 minutes of samples, one per second: node CPU 1 core then 2 cores in the last 5 minutes.
  for (int s = 12 * 60; s >= 0; --s) {
    auto t = now - std::chrono::seconds(s);
    double cpu = s < 300 ? 2.0 : 1.0;
    REQUIRE(cache.append(mc::MetricKind::kNodeCPUUsage, "", t, cpu));
    REQUIRE(cache.append(mc::MetricKind::kNodeMemoryUsage, "", t, 4.0 * (1 << 30)));
    REQUIRE(cache.append(mc::MetricKind::kSystemCPUUsage, "", t, 0.25));
    REQUIRE(cache.append(mc::MetricKind::kSystemMemoryUsage, "", t, 1.0 * (1 << 30)));
    if (s < 100) {
      REQUIRE(cache.append(mc::MetricKind::kPodCPUUsage, "uid-b", t, 1.5));
      REQUIRE(cache.append(mc::MetricKind::kPodMemoryUsage, "uid-b", t, 512.0 * (1 << 20)));
      REQUIRE(cache.append(mc::MetricKind::kPodCPUUsage, "uid-a", t, 0.1));
      REQUIRE(cache.append(mc::MetricKind::kPodMemoryUsage, "uid-a", t, 64.0 * (1 << 20)));
    }
  }
  std::vector<PodMeta> pods{
      pod("web", "nginx", "uid-a", koord::apis::QoSClass::kLS, koord::apis::PriorityClass::kProd),
      pod("batch", "spark", "uid-b", koord::apis::QoSClass::kBE,
          koord::apis::PriorityClass::kBatch),
      pod("web", "idle", "uid-none", koord::apis::QoSClass::kLS,
          koord::apis::PriorityClass::kProd)};
  NodeMetricCollectSettings settings;  // 300 s window, durations 5m/10m/30m
  auto status = buildNodeMetricStatus(cache, pods, settings, now);

  CHECK(status.at("updateTime").as_string() == koord::kube::formatTime(now));
  const auto& nm = status.at("nodeMetric").as_object();
  // The last 300 s (both ends included: 301 samples, one of them at 1 core).
  CHECK(cpuOf(nm.at("nodeUsage")) == "1997m");
  CHECK(nm.at("nodeUsage").at("resources").at("memory").as_string() == "4Gi");
  CHECK(cpuOf(nm.at("systemUsage")) == "250m");
  // 12 minutes of data cover 5m and 10m; 30m is still cold and left out.
  const auto& agg = nm.at("aggregatedNodeUsages").as_array();
  REQUIRE(agg.size() == 2);
  CHECK(agg[0].at("duration").as_string() == "5m0s");
  CHECK(agg[1].at("duration").as_string() == "10m0s");
  CHECK(cpuOf(agg[1].at("usage").at("p99")) == "2");
  CHECK(cpuOf(agg[1].at("usage").at("p50")) == "1");
  CHECK(cpuOf(agg[1].at("usage").at("avg")) == "1499m");
  CHECK(nm.at("aggregatedSystemUsages").as_array().size() == 2);

  // Sorted by namespace/name; the pod without samples is left out.
  const auto& pm = status.at("podsMetric").as_array();
  REQUIRE(pm.size() == 2);
  CHECK(pm[0].at("name").as_string() == "spark");
  CHECK(pm[0].at("qos").as_string() == "BE");
  CHECK(pm[0].at("priority").as_string() == "koord-batch");
  CHECK(cpuOf(pm[0].at("podUsage")) == "1500m");
  CHECK(pm[0].at("podUsage").at("resources").at("memory").as_string() == "512Mi");
  CHECK(pm[1].at("name").as_string() == "nginx");
  CHECK(pm[1].at("qos").as_string() == "LS");
}

TEST_CASE("collect policy: defaults and Koordinator's floors") {
  auto d = collectSettings({});
  CHECK(d.aggregate_duration == 300s);
  CHECK(d.report_interval == 60s);
  CHECK(d.durations.size() == 3);
  NodeMetricCollectPolicyView v;
  v.aggregate_duration_seconds = 10;
  v.report_interval_seconds = 5;
  v.durations = std::vector<std::chrono::nanoseconds>{2min};
  auto s = collectSettings(v);
  CHECK(s.aggregate_duration == 60s);
  CHECK(s.report_interval == 30s);
  REQUIRE(s.durations.size() == 1);
  CHECK(s.durations[0] == 120s);
}

TEST_CASE("RFC 3339 as metav1.Time writes it") {
  CHECK(koord::kube::formatTime(mc::TimePoint{std::chrono::seconds(0)}) == "1970-01-01T00:00:00Z");
  CHECK(koord::kube::formatTime(mc::TimePoint{std::chrono::seconds(1'800'000'000)}) ==
        "2027-01-15T08:00:00Z");
}
