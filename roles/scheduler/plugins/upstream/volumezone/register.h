// VolumeZone's entry in the plugin registry: upstream's name, no args, and the storage
// informers it reads (claims, volumes, classes). The in-tree registry table calls it.
#pragma once

namespace koord::roles::scheduler {
class PluginRegistry;
}

namespace koord::roles::scheduler::upstream {

void registerVolumeZone(PluginRegistry& registry);

}  // namespace koord::roles::scheduler::upstream
