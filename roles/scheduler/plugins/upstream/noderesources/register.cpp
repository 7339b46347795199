#include "plugins/upstream/noderesources/register.h"

#include <memory>
#include <string>

#include "framework/plugin_factory.h"
#include "plugins/upstream/noderesources/balanced_allocation.h"
#include "plugins/upstream/noderesources/fit.h"
#include "plugins/upstream/noderesources/least_allocated.h"
#include "plugins/upstream/noderesources/most_allocated.h"

namespace koord::roles::scheduler::upstream {

void registerNodeResourcesFit(PluginRegistry& registry) {
  registry.add(std::string(kNodeResourcesFitName),
               makePluginFactory<NodeResourcesFitArgs>(
                   decodeNodeResourcesFitArgs,
                   [](std::shared_ptr<const NodeResourcesFitArgs> args,
                      FrameworkHandle&) -> std::shared_ptr<Plugin> {
                     // A scoring strategy (v1beta2+) makes Fit a Score plugin too.
                     if (args && args->scoring_strategy)
                       return std::make_shared<ScoringNodeResourcesFit>(std::move(args));
                     return std::make_shared<NodeResourcesFit>(std::move(args));
                   },
                   "NodeResourcesFit: args are not NodeResourcesFitArgs"));
}

void registerNodeResourcesLeastAllocated(PluginRegistry& registry) {
  registry.add(std::string(kNodeResourcesLeastAllocatedName),
               makePluginFactory<NodeResourcesLeastAllocated, NodeResourcesLeastAllocatedArgs>(
                   decodeNodeResourcesLeastAllocatedArgs,
                   "NodeResourcesLeastAllocated: args are not NodeResourcesLeastAllocatedArgs"));
}

void registerNodeResourcesMostAllocated(PluginRegistry& registry) {
  registry.add(std::string(kNodeResourcesMostAllocatedName),
               makePluginFactory<NodeResourcesMostAllocated, NodeResourcesMostAllocatedArgs>(
                   decodeNodeResourcesMostAllocatedArgs,
                   "NodeResourcesMostAllocated: args are not NodeResourcesMostAllocatedArgs"));
}

void registerNodeResourcesBalancedAllocation(PluginRegistry& registry) {
  registry.add(
      std::string(kNodeResourcesBalancedAllocationName),
      makePluginFactory<NodeResourcesBalancedAllocation, NodeResourcesBalancedAllocationArgs>(
          decodeNodeResourcesBalancedAllocationArgs,
          "NodeResourcesBalancedAllocation: args are not NodeResourcesBalancedAllocationArgs"));
}

}  // namespace koord::roles::scheduler::upstream
