// The order LowNodeLoad evicts a hot node's pods in (Koordinator's pod sorter): least important
// first, then the pods whose usage best covers what the node is over by, then the youngest.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "framework/types.h"
#include "plugins/lownodeload/args.h"

namespace koord::roles::descheduler::lownodeload {

/// Koordinator's priority class of a pod: its label or priority band, else from its QoS.
apis::PriorityClass podPriorityClass(const Pod& pod);

/// Sorts `pods` for eviction. `usage` maps namespace/name to each pod's usage (from NodeMetric;
/// pods without one go last); `excess` is how far the node is over each overused resource, and
/// `weights` the resource weights (only the overused resources count).
void sortForEviction(std::vector<const Pod*>& pods,
                     const std::map<std::string, ResourceAmounts, std::less<>>& usage,
                     const ResourceAmounts& excess, const ResourceWeights& weights);

}  // namespace koord::roles::descheduler::lownodeload
