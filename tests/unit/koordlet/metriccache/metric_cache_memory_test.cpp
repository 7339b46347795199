#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "metriccache/metric_cache.h"

using namespace koord::roles::koordlet::metriccache;
using std::chrono::seconds;

namespace {

const TimePoint kT0 = fromMs(1'700'000'000'000);
constexpr double kMiB = 1024.0 * 1024;

// A pod UID is 36 characters, long enough to need its own heap block.
std::string podUid(int i) {
  std::string uid = "00000000-0000-4000-8000-" + std::to_string(100000000000 + i);
  return uid;
}

}  // namespace

// The documented bound: 8 bytes per point of a full ring plus at most 512 bytes per object
// (hash node, key, kind entries) and 64 KiB of fixed cost (bucket array, the cache itself).
TEST_CASE("400 pods x 2 metrics x 1800 points stay within the documented bound") {
  constexpr int kPods = 400;
  constexpr int kPoints = 1800;
  constexpr std::size_t kSeries = 2 * kPods;
  constexpr std::size_t kRingBytes = kSeries * kPoints * 8;
  constexpr std::size_t kBound = kRingBytes + kPods * 512 + 64 * 1024;

  MetricCache cache;
  std::vector<std::string> uids;
  for (int p = 0; p < kPods; ++p) {
    uids.push_back(podUid(p));
  }
  std::vector<Sample> round;
  round.reserve(kSeries);
  // Run past the capacity so every ring has wrapped.
  for (int t = 0; t < kPoints + 200; ++t) {
    round.clear();
    for (int p = 0; p < kPods; ++p) {
      round.push_back({MetricKind::kPodCPUUsage, uids[p], kT0 + seconds(t), 0.001 * (p + t % 7)});
      // Page multiples of ~100 MiB are exact in a float.
      round.push_back(
          {MetricKind::kPodMemoryUsage, uids[p], kT0 + seconds(t), 100 * kMiB + p * 4096.0});
    }
    REQUIRE(cache.appendAll(round).rejected == 0);
  }

  const MetricCacheStats stats = cache.stats();
  CHECK(stats.series == kSeries);
  CHECK(stats.points == kSeries * kPoints);
  const std::size_t bytes = cache.approximateBytes();
  INFO("approximateBytes = " << bytes << ", bound = " << kBound);
  CHECK(bytes >= kRingBytes);
  CHECK(bytes <= kBound);

  const auto agg = cache.aggregate(MetricKind::kPodMemoryUsage, uids[7], kT0, kT0 + seconds(3000));
  REQUIRE(agg);
  CHECK(agg->count == kPoints);
  CHECK(agg->avg == 100 * kMiB + 7 * 4096.0);
}
