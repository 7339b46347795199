// Koordinator's PodThrottledCollector: the share of CFS periods each pod and container was
// throttled in since the last round (cpu.stat), into the metric cache.
#pragma once

#include <cstdint>
#include <optional>

#include "metricsadvisor/framework/collector.h"

namespace koord::roles::koordlet::metricsadvisor {

/// No gate: Koordinator runs it always. Every -collect-res-used-interval.
CollectorSpec podThrottledCollector();

}  // namespace koord::roles::koordlet::metricsadvisor
