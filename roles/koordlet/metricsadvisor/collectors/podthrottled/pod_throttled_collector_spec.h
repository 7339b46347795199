// Koordinator's PodThrottledCollector: the share of CFS periods each pod and container was
// throttled in since the last round (cpu.stat), into the metric cache.
#pragma once

#include <cstdint>
#include <optional>

#include "metricsadvisor/framework/collector.h"

namespace koord::roles::koordlet::metricsadvisor {

/// No gate: Koordinator runs it always. Every -collect-res-used-interval.
CollectorSpec podThrottledCollector();

struct ThrottleCount {
  std::uint64_t nr_periods = 0;
  std::uint64_t nr_throttled = 0;
};

/// Throttled periods over elapsed periods between two readings; 0 when no period elapsed (as
/// Koordinator has it); nullopt when a counter went backwards (the cgroup was made anew).
std::optional<double> cpuThrottledRatio(const ThrottleCount& before, const ThrottleCount& now);

}  // namespace koord::roles::koordlet::metricsadvisor
