// The order the community descheduler looks at a node's pods in when any of them would do: lowest
// priority first (no priority before any), then the lowest QoS.
#pragma once

#include <memory>
#include <vector>

#include "framework/types.h"

namespace koord::roles::descheduler::interpodantiaffinity {

/// Stable, so pods that compare equal keep the snapshot's order.
void sortPodsLowToHigh(std::vector<std::shared_ptr<const Pod>>& pods);

}  // namespace koord::roles::descheduler::interpodantiaffinity
