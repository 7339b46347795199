#include "metriccache/metric_cache.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

using namespace koord::roles::koordlet::metriccache;
using std::chrono::milliseconds;
using std::chrono::seconds;

namespace {

const TimePoint kT0 = fromMs(1'700'000'000'000);
constexpr double kGiB = 1024.0 * 1024 * 1024;
constexpr double kMiB = 1024.0 * 1024;

TimePoint at(double secs) {
  return kT0 + std::chrono::duration_cast<TimePoint::duration>(std::chrono::duration<double>(secs));
}

bool refusedWith(const koord::Result<void>& r, MetricCacheErrc e) {
  return !r && r.error() == makeError(e);
}

}  // namespace

TEST_CASE("aggregate computes count, avg, last and percentiles over a window") {
  MetricCache cache;
  for (int i = 1; i <= 10; ++i) {
    REQUIRE(cache.append(MetricKind::kNodeCPUUsage, "", at(i), i));
  }
  const auto agg = cache.aggregate(MetricKind::kNodeCPUUsage, "", at(0), at(20));
  REQUIRE(agg);
  CHECK(agg->count == 10);
  CHECK(agg->first_time == at(1));
  CHECK(agg->last_time == at(10));
  CHECK(agg->span() == seconds(9));
  CHECK(agg->avg == 5.5);
  CHECK(agg->last == 10);
  CHECK(agg->p50 == 5);
  CHECK(agg->p90 == 9);
  CHECK(agg->p95 == 9);
  CHECK(agg->p99 == 9);

  const auto summary = cache.summarize(MetricKind::kNodeCPUUsage, "", at(0), at(20));
  REQUIRE(summary);
  CHECK(summary->count == 10);
  CHECK(summary->avg == 5.5);
  CHECK(summary->last == 10);
}

TEST_CASE("windows include both ends and select only their points") {
  MetricCache cache;
  for (int i = 1; i <= 10; ++i) {
    REQUIRE(cache.append(MetricKind::kPodCPUUsage, "pod-a", at(i), i * 0.5));
  }
  const auto agg = cache.aggregate(MetricKind::kPodCPUUsage, "pod-a", at(3), at(6));
  REQUIRE(agg);
  CHECK(agg->count == 4);  // 3, 4, 5, 6
  CHECK(agg->first_time == at(3));
  CHECK(agg->last_time == at(6));
  CHECK(agg->avg == Approx(2.25));
  CHECK(agg->last == 3.0);
  // A window end that falls between milliseconds excludes the point after it.
  const auto inner = cache.aggregate(MetricKind::kPodCPUUsage, "pod-a", at(3.0001), at(5.9999));
  REQUIRE(inner);
  CHECK(inner->count == 2);
}

TEST_CASE("memory values keep better than 1 MiB precision at hundreds of GiB") {
  MetricCache cache;
  const double base = 300 * kGiB;
  for (int i = 0; i < 5; ++i) {
    REQUIRE(cache.append(MetricKind::kNodeMemoryUsage, "", at(i), base + i * kMiB + 12345));
  }
  const auto agg = cache.aggregate(MetricKind::kNodeMemoryUsage, "", at(0), at(10));
  REQUIRE(agg);
  CHECK(std::fabs(agg->avg - (base + 2 * kMiB + 12345)) < kMiB);
  CHECK(std::fabs(agg->last - (base + 4 * kMiB + 12345)) < kMiB);
  CHECK(agg->p99 < agg->last + 1);  // p99 of 5 samples is the 4th, below the last
}

TEST_CASE("CPU values keep millicore precision") {
  MetricCache cache;
  REQUIRE(cache.append(MetricKind::kContainerCPUUsage, "containerd://abc", at(1), 63.001));
  const auto last = cache.last(MetricKind::kContainerCPUUsage, "containerd://abc");
  REQUIRE(last);
  CHECK(std::fabs(last->value - 63.001) < 1e-4);
}

TEST_CASE("windows without points give nullopt") {
  MetricCache cache;
  CHECK_FALSE(cache.aggregate(MetricKind::kNodeCPUUsage, "", at(0), at(10)));
  CHECK_FALSE(cache.last(MetricKind::kNodeCPUUsage, ""));
  REQUIRE(cache.append(MetricKind::kNodeCPUUsage, "", at(10), 1));
  REQUIRE(cache.append(MetricKind::kNodeCPUUsage, "", at(20), 2));
  CHECK_FALSE(cache.aggregate(MetricKind::kNodeCPUUsage, "", at(0), at(9)));    // before
  CHECK_FALSE(cache.aggregate(MetricKind::kNodeCPUUsage, "", at(11), at(19)));  // in the gap
  CHECK_FALSE(cache.aggregate(MetricKind::kNodeCPUUsage, "", at(21), at(30)));  // after
  CHECK_FALSE(cache.aggregate(MetricKind::kNodeCPUUsage, "", at(20), at(10)));  // inverted
  CHECK_FALSE(cache.summarize(MetricKind::kNodeCPUUsage, "", at(11), at(19)));
  CHECK_FALSE(cache.aggregate(MetricKind::kNodeMemoryUsage, "", at(0), at(30)));  // other kind
  CHECK_FALSE(cache.aggregate(MetricKind::kNodeCPUUsage, "pod", at(0), at(30)));  // other key
  CHECK(cache.aggregate(MetricKind::kNodeCPUUsage, "", at(20), at(20)));  // a one-point window
}

TEST_CASE("out-of-order, duplicate and non-finite samples are refused") {
  MetricCache cache;
  REQUIRE(cache.append(MetricKind::kNodeCPUUsage, "", at(10), 1));
  CHECK(refusedWith(cache.append(MetricKind::kNodeCPUUsage, "", at(9), 2),
                    MetricCacheErrc::kOutOfOrder));
  CHECK(refusedWith(cache.append(MetricKind::kNodeCPUUsage, "", at(10), 3),
                    MetricCacheErrc::kDuplicateTimestamp));
  // Within the same millisecond is a duplicate too.
  CHECK(refusedWith(cache.append(MetricKind::kNodeCPUUsage, "", at(10.0004), 3),
                    MetricCacheErrc::kDuplicateTimestamp));
  CHECK(refusedWith(
      cache.append(MetricKind::kNodeCPUUsage, "", at(11), std::numeric_limits<double>::quiet_NaN()),
      MetricCacheErrc::kNonFiniteValue));
  CHECK(refusedWith(
      cache.append(MetricKind::kNodeCPUUsage, "", at(11), std::numeric_limits<double>::infinity()),
      MetricCacheErrc::kNonFiniteValue));
  CHECK(refusedWith(cache.append(MetricKind::kNodeCPUUsage, "", at(11), 1e39),
                    MetricCacheErrc::kNonFiniteValue));
  REQUIRE(cache.append(MetricKind::kNodeCPUUsage, "", at(11), 4));

  const auto agg = cache.aggregate(MetricKind::kNodeCPUUsage, "", at(0), at(20));
  REQUIRE(agg);
  CHECK(agg->count == 2);
  CHECK(agg->avg == 2.5);
  const MetricCacheStats stats = cache.stats();
  CHECK(stats.appended == 2);
  CHECK(stats.rejected_out_of_order == 1);
  CHECK(stats.rejected_duplicate == 2);
  CHECK(stats.rejected_non_finite == 3);
  CHECK_FALSE(makeError(MetricCacheErrc::kOutOfOrder).message().empty());
}

TEST_CASE("a wall-clock step back restarts the series when the reset is enabled") {
  MetricCache cache;  // clock_step_reset 60 s
  REQUIRE(cache.append(MetricKind::kNodeCPUUsage, "", at(1000), 1));
  REQUIRE(cache.append(MetricKind::kNodeCPUUsage, "", at(1001), 1));
  CHECK(refusedWith(cache.append(MetricKind::kNodeCPUUsage, "", at(990), 2),
                    MetricCacheErrc::kOutOfOrder));
  REQUIRE(cache.append(MetricKind::kNodeCPUUsage, "", at(900), 3));
  const auto agg = cache.aggregate(MetricKind::kNodeCPUUsage, "", at(0), at(2000));
  REQUIRE(agg);
  CHECK(agg->count == 1);
  CHECK(agg->last == 3);
  CHECK(cache.stats().clock_step_resets == 1);

  MetricCacheOptions no_reset;
  no_reset.clock_step_reset = seconds(0);
  MetricCache strict(no_reset);
  REQUIRE(strict.append(MetricKind::kNodeCPUUsage, "", at(1000), 1));
  CHECK(refusedWith(strict.append(MetricKind::kNodeCPUUsage, "", at(900), 3),
                    MetricCacheErrc::kOutOfOrder));
}

TEST_CASE("retention drops points older than the series' newest minus retention") {
  MetricCacheOptions options;
  options.retention = seconds(10);
  options.collect_interval = milliseconds(1000);
  MetricCache cache(options);
  for (int i = 0; i <= 30; i += 2) {
    REQUIRE(cache.append(MetricKind::kNodeCPUUsage, "", at(i), i));
  }
  const auto agg = cache.aggregate(MetricKind::kNodeCPUUsage, "", at(0), at(100));
  REQUIRE(agg);
  CHECK(agg->first_time == at(20));
  CHECK(agg->count == 6);  // 20, 22, ..., 30
}

TEST_CASE("capacity bounds a series collected faster than expected") {
  MetricCacheOptions options;
  options.retention = seconds(10);
  options.collect_interval = milliseconds(1000);  // capacity 10 points
  MetricCache cache(options);
  for (int i = 0; i < 40; ++i) {
    REQUIRE(cache.append(MetricKind::kNodeCPUUsage, "", at(i * 0.5), i));
  }
  const auto agg = cache.aggregate(MetricKind::kNodeCPUUsage, "", at(0), at(100));
  REQUIRE(agg);
  CHECK(agg->count == 10);
  CHECK(agg->first_time == at(15));
  CHECK(agg->last == 39);
}

TEST_CASE("per-kind retention shortens only the listed kinds") {
  MetricCacheOptions options;
  options.retention_by_kind = {{MetricKind::kPodCPUUsage, seconds(5)}};
  MetricCache cache(options);
  CHECK(options.capacityFor(MetricKind::kPodCPUUsage) == 5);
  CHECK(options.capacityFor(MetricKind::kNodeCPUUsage) == 1800);
  for (int i = 0; i < 20; ++i) {
    REQUIRE(cache.append(MetricKind::kPodCPUUsage, "pod", at(i), 1));
    REQUIRE(cache.append(MetricKind::kNodeCPUUsage, "", at(i), 1));
  }
  CHECK(cache.aggregate(MetricKind::kPodCPUUsage, "pod", at(0), at(30))->count == 5);
  CHECK(cache.aggregate(MetricKind::kNodeCPUUsage, "", at(0), at(30))->count == 20);
}

TEST_CASE("last and lastWithin return the newest sample when fresh enough") {
  MetricCache cache;
  REQUIRE(cache.append(MetricKind::kBECPUUsage, "", at(1), 0.5));
  REQUIRE(cache.append(MetricKind::kBECPUUsage, "", at(2), 0.75));
  const auto last = cache.last(MetricKind::kBECPUUsage, "");
  REQUIRE(last);
  CHECK(last->time == at(2));
  CHECK(last->value == 0.75);
  CHECK(cache.lastWithin(MetricKind::kBECPUUsage, "", seconds(10), at(12)));
  CHECK_FALSE(cache.lastWithin(MetricKind::kBECPUUsage, "", seconds(10), at(12.001)));
  CHECK(cache.lastWithin(MetricKind::kBECPUUsage, "", seconds(10), at(1)));  // sample after now
  CHECK_FALSE(cache.lastWithin(MetricKind::kBECPURequest, "", seconds(10), at(2)));
}

TEST_CASE("the series cap refuses new keyed series but not node-level ones") {
  MetricCacheOptions options;
  options.max_series = 3;
  MetricCache cache(options);
  REQUIRE(cache.append(MetricKind::kPodCPUUsage, "pod-1", at(1), 1));
  REQUIRE(cache.append(MetricKind::kPodMemoryUsage, "pod-1", at(1), 1));
  REQUIRE(cache.append(MetricKind::kPodCPUUsage, "pod-2", at(1), 1));
  CHECK(refusedWith(cache.append(MetricKind::kPodCPUUsage, "pod-3", at(1), 1),
                    MetricCacheErrc::kSeriesLimit));
  CHECK(refusedWith(cache.append(MetricKind::kPodMemoryUsage, "pod-2", at(1), 1),
                    MetricCacheErrc::kSeriesLimit));
  // Existing series keep working, and node-level series are outside the cap.
  CHECK(cache.append(MetricKind::kPodCPUUsage, "pod-1", at(2), 1));
  CHECK(cache.append(MetricKind::kNodeCPUUsage, "", at(2), 1));
  CHECK(cache.append(MetricKind::kSystemCPUUsage, "", at(2), 1));
  CHECK(cache.seriesCount() == 5);
  CHECK(cache.stats().rejected_series_limit == 2);
  CHECK_FALSE(cache.last(MetricKind::kPodCPUUsage, "pod-3"));

  CHECK(cache.removeObject("pod-1") == 2);
  CHECK(cache.append(MetricKind::kPodCPUUsage, "pod-3", at(3), 1));
  CHECK(cache.seriesCount() == 4);
}

TEST_CASE("appendAll appends a collector round and counts refusals") {
  MetricCache cache;
  const std::string pod = "8a9f6c1e-2f1b-4a34-b1a5-55e0f0a1c001";
  const std::vector<Sample> round{
      {MetricKind::kPodCPUUsage, pod, at(1), 0.25},
      {MetricKind::kPodMemoryUsage, pod, at(1), 64 * kMiB},
      {MetricKind::kPodCPUUsage, pod, at(1), 0.5},  // duplicate time
  };
  const AppendSummary summary = cache.appendAll(round);
  CHECK(summary.appended == 2);
  CHECK(summary.rejected == 1);
  CHECK(cache.last(MetricKind::kPodCPUUsage, pod)->value == 0.25);
  CHECK(cache.last(MetricKind::kPodMemoryUsage, pod)->value == 64 * kMiB);
}

TEST_CASE("options the cache cannot honour fail at construction") {
  const auto invalid = [](auto mutate) {
    MetricCacheOptions options;
    mutate(options);
    return options;
  };
  CHECK_THROWS_AS(MetricCache(invalid([](auto& o) { o.retention = seconds(0); })),
                  std::invalid_argument);
  CHECK_THROWS_AS(MetricCache(invalid([](auto& o) { o.retention = seconds(8 * 24 * 3600); })),
                  std::invalid_argument);
  CHECK_THROWS_AS(MetricCache(invalid([](auto& o) { o.collect_interval = milliseconds(0); })),
                  std::invalid_argument);
  CHECK_THROWS_AS(MetricCache(invalid([](auto& o) { o.max_series = 0; })), std::invalid_argument);
  CHECK_THROWS_AS(MetricCache(invalid([](auto& o) { o.series_expire = seconds(-1); })),
                  std::invalid_argument);
  CHECK_THROWS_AS(MetricCache(invalid([](auto& o) { o.clock_step_reset = seconds(-1); })),
                  std::invalid_argument);
  CHECK_THROWS_AS(MetricCache(invalid([](auto& o) {
                    o.retention_by_kind = {{MetricKind::kPodCPUUsage, seconds(0)}};
                  })),
                  std::invalid_argument);
  CHECK_THROWS_AS(MetricCache(invalid([](auto& o) {
                    o.retention = seconds(7 * 24 * 3600);
                    o.collect_interval = milliseconds(1);
                  })),
                  std::invalid_argument);
  CHECK_NOTHROW(MetricCache(MetricCacheOptions{}));
}
