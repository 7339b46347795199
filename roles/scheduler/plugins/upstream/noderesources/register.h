// The node-resource plugins' entries in the plugin registry (Fit, and the Least/Most/Balanced
// allocation scores): upstream's names, their args decoders and factories.
#pragma once

namespace koord::roles::scheduler {
class PluginRegistry;
}

namespace koord::roles::scheduler::upstream {

void registerNodeResourcesFit(PluginRegistry& registry);
void registerNodeResourcesLeastAllocated(PluginRegistry& registry);
void registerNodeResourcesMostAllocated(PluginRegistry& registry);
void registerNodeResourcesBalancedAllocation(PluginRegistry& registry);

}  // namespace koord::roles::scheduler::upstream
