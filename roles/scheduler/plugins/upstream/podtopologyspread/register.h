// PodTopologySpread's entry in the plugin registry: upstream's name, its args decoder (default
// constraints per apiVersion) and the factory that builds it on a profile's FrameworkHandle.
#pragma once

namespace koord::roles::scheduler {
class PluginRegistry;
}

namespace koord::roles::scheduler::upstream {

void registerPodTopologySpread(PluginRegistry& registry);

}  // namespace koord::roles::scheduler::upstream
