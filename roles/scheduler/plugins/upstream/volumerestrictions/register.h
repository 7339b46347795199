// VolumeRestrictions's entry in the plugin registry: upstream's name, no args.
// The in-tree registry table (plugins/in_tree_registry.cpp) calls it.
#pragma once

namespace koord::roles::scheduler {
class PluginRegistry;
}

namespace koord::roles::scheduler::upstream {

void registerVolumeRestrictions(PluginRegistry& registry);

}  // namespace koord::roles::scheduler::upstream
