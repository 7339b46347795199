#include "plugins/upstream/upstream_plugins.h"

namespace koord::roles::scheduler::upstream {

void registerUpstreamPlugins(PluginRegistry& registry) {
  registerPrioritySort(registry);
  registerNodeUnschedulable(registry);
  registerNodeName(registry);
  registerNodePorts(registry);
  registerNodeAffinity(registry);
  registerTaintToleration(registry);
  registerNodeResourcesFit(registry);
  registerNodeResourcesLeastAllocated(registry);
  registerNodeResourcesMostAllocated(registry);
  registerNodeResourcesBalancedAllocation(registry);
  registerDefaultBinder(registry);
}

}  // namespace koord::roles::scheduler::upstream
