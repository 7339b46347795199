#include <catch2/catch.hpp>

#include "metriccache/metric_cache.h"

using namespace koord::roles::koordlet::metriccache;
using std::chrono::seconds;

namespace {

const TimePoint kT0 = fromMs(1'700'000'000'000);

TimePoint at(int secs) {
  return kT0 + seconds(secs);
}

}  // namespace

TEST_CASE("GC drops series with no sample newer than the expiry") {
  MetricCache cache;  // series_expire 1800 s
  REQUIRE(cache.append(MetricKind::kPodCPUUsage, "gone", at(0), 1));
  REQUIRE(cache.append(MetricKind::kPodMemoryUsage, "gone", at(0), 1));
  REQUIRE(cache.append(MetricKind::kPodCPUUsage, "alive", at(1700), 1));
  REQUIRE(cache.append(MetricKind::kNodeCPUUsage, "", at(1800), 1));

  GarbageReport report = cache.collectGarbage(at(1800));
  CHECK(report.series_removed == 0);  // exactly at the expiry still counts as alive

  report = cache.collectGarbage(at(1801));
  CHECK(report.series_removed == 2);
  CHECK(report.points_removed == 2);
  CHECK(cache.seriesCount() == 2);
  CHECK_FALSE(cache.last(MetricKind::kPodCPUUsage, "gone"));
  CHECK(cache.last(MetricKind::kPodCPUUsage, "alive"));
  CHECK(cache.last(MetricKind::kNodeCPUUsage, ""));
}

TEST_CASE("GC trims points older than retention from idle series") {
  MetricCacheOptions options;
  options.retention = seconds(60);
  MetricCache cache(options);
  for (int i = 0; i < 60; ++i) {
    REQUIRE(cache.append(MetricKind::kHostAppCPUUsage, "nginx", at(i), i));
  }
  const GarbageReport report = cache.collectGarbage(at(100));  // keeps points at >= 40 s
  CHECK(report.series_removed == 0);
  CHECK(report.points_removed == 40);
  const auto agg = cache.aggregate(MetricKind::kHostAppCPUUsage, "nginx", at(0), at(100));
  REQUIRE(agg);
  CHECK(agg->count == 20);
  CHECK(agg->first_time == at(40));
  CHECK(cache.stats().points == 20);
}

TEST_CASE("GC gives back the memory of trimmed rings") {
  MetricCacheOptions options;
  options.retention = seconds(1000);
  MetricCache cache(options);
  for (int i = 0; i < 1000; ++i) {
    REQUIRE(cache.append(MetricKind::kNodeCPUUsage, "", at(i), 1));
  }
  const std::size_t before = cache.approximateBytes();
  cache.collectGarbage(at(1990));  // 10 points left of 1000
  CHECK(cache.approximateBytes() + 900 * 8 < before);
  CHECK(cache.aggregate(MetricKind::kNodeCPUUsage, "", at(0), at(2000))->count == 10);
}

TEST_CASE("removing a deleted pod drops all its series and nothing else") {
  MetricCache cache;
  const std::string pod = "0b7e5d1c-9a4f-4c1e-8f3a-2d6b9e7c1a00";
  REQUIRE(cache.append(MetricKind::kPodCPUUsage, pod, at(1), 1));
  REQUIRE(cache.append(MetricKind::kPodMemoryUsage, pod, at(1), 1));
  REQUIRE(cache.append(MetricKind::kPodCPUUsage, "other", at(1), 1));
  REQUIRE(cache.append(MetricKind::kNodeCPUUsage, "", at(1), 1));

  CHECK(cache.removeObject(pod) == 2);
  CHECK(cache.removeObject(pod) == 0);
  CHECK_FALSE(cache.last(MetricKind::kPodCPUUsage, pod));
  CHECK_FALSE(cache.last(MetricKind::kPodMemoryUsage, pod));
  CHECK(cache.seriesCount() == 2);

  CHECK(cache.removeSeries(MetricKind::kPodCPUUsage, "other"));
  CHECK_FALSE(cache.removeSeries(MetricKind::kPodCPUUsage, "other"));
  CHECK_FALSE(cache.removeSeries(MetricKind::kPodMemoryUsage, ""));
  CHECK(cache.seriesCount() == 1);
  CHECK(cache.last(MetricKind::kNodeCPUUsage, ""));

  // A re-created pod starts a fresh series, even with older timestamps.
  CHECK(cache.append(MetricKind::kPodCPUUsage, pod, at(0), 2));
  CHECK(cache.last(MetricKind::kPodCPUUsage, pod)->value == 2);
}
