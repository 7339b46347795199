#include <catch2/catch.hpp>

#include <atomic>
#include <string>
#include <thread>

#include "metriccache/metric_cache.h"

using namespace koord::roles::koordlet::metriccache;
using std::chrono::milliseconds;

namespace {

const TimePoint kT0 = fromMs(1'700'000'000'000);

}  // namespace

// One collector thread appends while a reader aggregates, as the koordlet's collectors and
// reporter do; the reader only checks that what it sees is consistent.
TEST_CASE("concurrent appends and reads see consistent series") {
  MetricCacheOptions options;
  options.retention = std::chrono::seconds(100);
  options.collect_interval = milliseconds(100);  // 1000-point rings
  MetricCache cache(options);
  constexpr int kRounds = 3000;
  std::atomic<bool> done{false};
  std::atomic<int> bad_reads{0};
  std::atomic<int> reads{0};

  // The writer waits for the reader's first pass: on a loaded machine it could otherwise finish
  // before the reader ran at all, and the test would have checked nothing concurrent.
  std::thread writer([&] {
    while (reads.load() == 0) {
      std::this_thread::yield();
    }
    for (int i = 0; i < kRounds; ++i) {
      const TimePoint t = kT0 + milliseconds(100) * i;
      cache.append(MetricKind::kNodeCPUUsage, "", t, i % 100);
      cache.append(MetricKind::kPodCPUUsage, "pod-" + std::to_string(i % 50), t, 1.0);
      if (i % 500 == 499) {
        cache.removeObject("pod-" + std::to_string((i / 500) % 50));
        cache.collectGarbage(t);
      }
    }
    done = true;
  });

  std::size_t previous_count = 0;
  do {
    const auto agg =
        cache.aggregate(MetricKind::kNodeCPUUsage, "", kT0, kT0 + std::chrono::hours(1));
    const auto pod = cache.last(MetricKind::kPodCPUUsage, "pod-3");
    const std::size_t bytes = cache.approximateBytes();
    ++reads;
    if (agg) {
      const bool sane = agg->count >= previous_count && agg->count <= 1000 && agg->avg >= 0 &&
                        agg->avg <= 99 && agg->p50 <= agg->p99 && agg->last_time >= agg->first_time;
      if (!sane) {
        ++bad_reads;
      }
      previous_count = agg->count;
    }
    if ((pod && pod->value != 1.0) || bytes == 0) {
      ++bad_reads;
    }
  } while (!done.load());
  writer.join();

  CHECK(bad_reads.load() == 0);
  CHECK(reads.load() > 0);
  const auto final_agg =
      cache.aggregate(MetricKind::kNodeCPUUsage, "", kT0, kT0 + std::chrono::hours(1));
  REQUIRE(final_agg);
  CHECK(final_agg->count == 1000);
  CHECK(final_agg->last == (kRounds - 1) % 100);
}
