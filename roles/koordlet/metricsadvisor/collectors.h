// The koordlet's gated collectors, one table line each (the usage collector that feeds the
// NodeMetric and the QoS strategies always runs and is not in it).
#pragma once

#include <span>

#include "metricsadvisor/framework/collector.h"

namespace koord::roles::koordlet::metricsadvisor {

std::span<const CollectorSpec> koordletCollectors();

}  // namespace koord::roles::koordlet::metricsadvisor
