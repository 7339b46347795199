// The spec the nodemetric controller gives each node's NodeMetric: how the koordlet collects and
// reports, taken from the node's colocation strategy.
#pragma once

#include <boost/json/fwd.hpp>

#include "koord/apis/slo_config.h"

namespace koord::roles::manager {

/// {"metricCollectPolicy": {aggregateDurationSeconds, reportIntervalSeconds,
///  nodeAggregatePolicy: {durations: ["5m0s", ...]}, nodeMemoryCollectPolicy}}.
boost::json::value nodeMetricSpec(const apis::ColocationStrategy& strategy);

}  // namespace koord::roles::manager
