// The kube-scheduler 1.20 node-local plugins this build carries, each registered under its
// upstream name; registerUpstreamPlugins adds them all (the in-tree registry calls it).
#pragma once

namespace koord::roles::scheduler {
class PluginRegistry;
}

namespace koord::roles::scheduler::upstream {

void registerPrioritySort(PluginRegistry& registry);
void registerNodeUnschedulable(PluginRegistry& registry);
void registerNodeName(PluginRegistry& registry);
void registerNodePorts(PluginRegistry& registry);
void registerNodeAffinity(PluginRegistry& registry);
void registerTaintToleration(PluginRegistry& registry);
void registerNodeResourcesFit(PluginRegistry& registry);
void registerNodeResourcesLeastAllocated(PluginRegistry& registry);
void registerNodeResourcesMostAllocated(PluginRegistry& registry);
void registerNodeResourcesBalancedAllocation(PluginRegistry& registry);
void registerDefaultBinder(PluginRegistry& registry);

void registerUpstreamPlugins(PluginRegistry& registry);

}  // namespace koord::roles::scheduler::upstream
