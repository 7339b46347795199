// CPICollector (Koordinator's performance collector, CPI half) as a metrics-advisor loop: each
// round's counting window runs on a thread of the collector's own, off the koordlet's io thread.
#pragma once

#include "metricsadvisor/framework/collector.h"

namespace koord::roles::koordlet::metricsadvisor {

/// Gate CPICollector, every -cpi-collector-interval, counting for -collect-cpi-timewindow. A
/// round that comes while the last window is still open is skipped.
CollectorSpec cpiCollector();

}  // namespace koord::roles::koordlet::metricsadvisor
