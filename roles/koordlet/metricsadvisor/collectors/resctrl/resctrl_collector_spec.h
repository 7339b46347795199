// ResctrlCollector as a metrics-advisor loop: each resctrl group's LLC occupancy and memory
// bandwidth per L3 domain on Koordinator's koordlet_resctrl_* gauges.
#pragma once

#include "metricsadvisor/framework/collector.h"

namespace koord::roles::koordlet::metricsadvisor {

/// Gate ResctrlCollector, and -enable-resctrl-collector, every -collect-res-used-interval.
CollectorSpec resctrlCollector();

}  // namespace koord::roles::koordlet::metricsadvisor
