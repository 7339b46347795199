// NodeAffinity's entry in the plugin registry: upstream's name, its args decoder (added
// affinity, v1beta2+) and factory.
#pragma once

namespace koord::roles::scheduler {
class PluginRegistry;
}

namespace koord::roles::scheduler::upstream {

void registerNodeAffinity(PluginRegistry& registry);

}  // namespace koord::roles::scheduler::upstream
