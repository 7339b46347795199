// Decoding of the node-resources plugins' shared arg pieces: resource lists with weights and
// RequestedToCapacityRatio's shape, with kube-scheduler's defaults and validation messages.
#pragma once

#include <boost/json/fwd.hpp>

#include <string_view>
#include <vector>

#include "koord/kube/error.h"
#include "plugins/upstream/noderesources/resource_allocation.h"

namespace koord::roles::scheduler::upstream {

/// [{name, weight}]: name required and unique, weight an integer (0 when absent, for the
/// caller's defaulting). Unknown fields are errors.
kube::Expected<std::vector<ResourceSpec>> decodeResourceSpecs(const boost::json::value& v,
                                                              std::string_view path);

/// The v1beta1 NodeResourcesLeast/MostAllocatedArgs: {resources}, cpu and memory by default,
/// every weight in [1, 100] (1.20 does not default a zero weight).
kube::Expected<std::vector<ResourceSpec>> decodeV1beta1ResourcesArgs(
    const boost::json::value* args);

/// Every weight in (0, 100] (scoringStrategy.resources in v1beta2+).
kube::Expected<void> validateResourceWeights(const std::vector<ResourceSpec>& resources,
                                             std::string_view path);

/// {shape: [{utilization, score}]}: at least one point, utilizations strictly increasing in
/// [0, 100], scores in [0, 10]; returned with scores scaled to [0, kMaxNodeScore].
kube::Expected<std::vector<UtilizationShapePoint>> decodeRequestedToCapacityRatio(
    const boost::json::value& v, std::string_view path);

}  // namespace koord::roles::scheduler::upstream
