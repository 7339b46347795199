// DefaultPreemption's entry in the plugin registry: upstream's name, its args decoder and the
// factory that builds it on a profile's FrameworkHandle (with a random candidate offset).
#pragma once

namespace koord::roles::scheduler {
class PluginRegistry;
}

namespace koord::roles::scheduler::upstream {

void registerDefaultPreemption(PluginRegistry& registry);

}  // namespace koord::roles::scheduler::upstream
