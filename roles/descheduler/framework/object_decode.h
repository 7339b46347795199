// The descheduler's informer projections: a Pod, Node or PodDisruptionBudget object from the API
// server into framework/types.h, errors naming the field (the informer then skips the object).
#pragma once

#include <boost/json/fwd.hpp>

#include "framework/types.h"
#include "koord/core/expected.h"

namespace koord::roles::descheduler {

/// More containers (init included) than this in one pod is refused: the API server's own limits
/// are far below, so such an object is not one a kubelet runs.
inline constexpr std::size_t kMaxContainersPerPod = 512;

Expected<Pod> decodePod(const boost::json::value& v);
Expected<Node> decodeNode(const boost::json::value& v);
/// policy/v1 and policy/v1beta1 read alike for what the evictor needs.
Expected<PodDisruptionBudget> decodePodDisruptionBudget(const boost::json::value& v);

}  // namespace koord::roles::descheduler
