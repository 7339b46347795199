#include "metriccache/window_aggregate.h"

#include <algorithm>

namespace koord::roles::koordlet::metriccache {

double percentileOfSorted(std::span<const float> sorted, std::uint32_t per_mille) {
  const std::size_t rank = sorted.size() * std::min<std::uint32_t>(per_mille, 1000) / 1000;
  return sorted[rank == 0 ? 0 : rank - 1];
}

WindowAggregate withPercentiles(const WindowSummary& summary, std::vector<float>& values) {
  WindowAggregate out;
  static_cast<WindowSummary&>(out) = summary;
  if (values.empty()) {
    return out;
  }
  std::sort(values.begin(), values.end());
  out.p50 = percentileOfSorted(values, 500);
  out.p90 = percentileOfSorted(values, 900);
  out.p95 = percentileOfSorted(values, 950);
  out.p99 = percentileOfSorted(values, 990);
  return out;
}

double coverageRatio(const WindowSummary& summary, TimePoint start, TimePoint end) {
  if (summary.count == 0 || end <= start) {
    return 0;
  }
  const std::chrono::duration<double> window = end - start;
  const std::chrono::duration<double> span = summary.last_time - summary.first_time;
  return span / window;
}

bool coversWindow(const WindowSummary& summary, TimePoint start, TimePoint end, double min_ratio) {
  if (summary.count == 0 || end <= start) {
    return false;
  }
  // Koordinator compares span seconds against window seconds * ratio; same rule, no division.
  const std::chrono::duration<double> window = end - start;
  const std::chrono::duration<double> span = summary.last_time - summary.first_time;
  return span.count() >= window.count() * min_ratio;
}

}  // namespace koord::roles::koordlet::metriccache
