// The volume-limit plugins' entries in the plugin registry: NodeVolumeLimits (CSI), EBSLimits,
// GCEPDLimits, AzureDiskLimits and CinderLimits, upstream's names, no args, each declaring the
// storage informers it reads. The in-tree registry table (plugins/in_tree_registry.cpp) calls
// them.
#pragma once

namespace koord::roles::scheduler {
class PluginRegistry;
}

namespace koord::roles::scheduler::upstream {

void registerNodeVolumeLimits(PluginRegistry& registry);
void registerEBSLimits(PluginRegistry& registry);
void registerGCEPDLimits(PluginRegistry& registry);
void registerAzureDiskLimits(PluginRegistry& registry);
void registerCinderLimits(PluginRegistry& registry);

}  // namespace koord::roles::scheduler::upstream
