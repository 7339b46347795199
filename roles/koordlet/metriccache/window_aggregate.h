// What a windowed query over one series returns: count, first/last sample time, average, last
// value and percentiles, plus Koordinator's "samples cover half the window" reporting rule.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "metriccache/metric_time.h"

namespace koord::roles::koordlet::metriccache {

/// The cheap part of a window query (no sorting): what the QoS manager needs.
struct WindowSummary {
  std::size_t count = 0;
  TimePoint first_time;
  TimePoint last_time;
  double avg = 0;
  /// The value of the newest sample in the window (Koordinator's AggregationTypeLast).
  double last = 0;

  /// How much of the window the samples cover: last_time - first_time.
  std::chrono::milliseconds span() const {
    return std::chrono::duration_cast<std::chrono::milliseconds>(last_time - first_time);
  }
};

/// A summary plus percentiles, for the NodeMetric reporter. Percentiles use Koordinator's method
/// (metriccache/util.go): sort the samples ascending and take the one at 1-based rank
/// floor(n * p), or the smallest when that rank is 0. This is a lower nearest rank with no
/// interpolation: with 10 samples p95 is the 9th smallest and p50 the 5th.
struct WindowAggregate : WindowSummary {
  double p50 = 0;
  double p90 = 0;
  double p95 = 0;
  double p99 = 0;
};

/// Koordinator's percentile over ascending-sorted values; per_mille in (0, 1000] (950 is p95).
/// Computed in integers, so ranks are exact where Go's float32 product can round. sorted must not
/// be empty.
double percentileOfSorted(std::span<const float> sorted, std::uint32_t per_mille);

/// Sorts values in place and fills the percentiles of an aggregate built on summary.
WindowAggregate withPercentiles(const WindowSummary& summary, std::vector<float>& values);

/// Koordinator reports an aggregated usage (5m/10m/30m avg and pXX) only when the samples span at
/// least half of the queried window (states_nodemetric.go, validateTimeRangeRatio = 0.5);
/// otherwise the koordlet is still "cold" for that window. It does not apply the rule to the
/// plain nodeUsage/systemUsage/pod averages.
inline constexpr double kMinWindowCoverage = 0.5;

/// (last_time - first_time) / (end - start), 0 for an empty or inverted window.
double coverageRatio(const WindowSummary& summary, TimePoint start, TimePoint end);

/// True when the samples span at least min_ratio of [start, end].
bool coversWindow(const WindowSummary& summary, TimePoint start, TimePoint end,
                  double min_ratio = kMinWindowCoverage);

}  // namespace koord::roles::koordlet::metriccache
