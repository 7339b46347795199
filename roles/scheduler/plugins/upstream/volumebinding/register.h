// VolumeBinding's entry in the plugin registry: upstream's name, its args decoder, the factory,
// and the storage informers it reads (PVs, claims, classes, CSINodes).
#pragma once

namespace koord::roles::scheduler {
class PluginRegistry;
}

namespace koord::roles::scheduler::upstream {

void registerVolumeBinding(PluginRegistry& registry);

}  // namespace koord::roles::scheduler::upstream
