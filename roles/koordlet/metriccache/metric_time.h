// Sample time in the metric cache: wall-clock time (what Koordinator's reporter windows use),
// kept internally as whole milliseconds since the Unix epoch, as Prometheus TSDB keeps it.
#pragma once

#include <chrono>
#include <cstdint>

namespace koord::roles::koordlet::metriccache {

/// Wall time, not steady time: the NodeMetric reporter asks for windows ending at "now" in wall
/// time and reports sample times in the API. Sub-millisecond parts are dropped on append.
using TimePoint = std::chrono::system_clock::time_point;

inline std::int64_t floorToMs(TimePoint t) {
  return std::chrono::floor<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

inline std::int64_t ceilToMs(TimePoint t) {
  return std::chrono::ceil<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

inline TimePoint fromMs(std::int64_t ms) {
  return TimePoint(std::chrono::duration_cast<TimePoint::duration>(std::chrono::milliseconds(ms)));
}

}  // namespace koord::roles::koordlet::metriccache
