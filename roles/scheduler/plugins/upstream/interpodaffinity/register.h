// InterPodAffinity's entry in the plugin registry: upstream's name, its args decoder (with
// defaults and validation) and the factory that builds it on a profile's FrameworkHandle.
#pragma once

namespace koord::roles::scheduler {
class PluginRegistry;
}

namespace koord::roles::scheduler::upstream {

void registerInterPodAffinity(PluginRegistry& registry);

}  // namespace koord::roles::scheduler::upstream
