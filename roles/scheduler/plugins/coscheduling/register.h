// The Coscheduling plugin's entry in the plugin registry: Koordinator's name, CoschedulingArgs
// and the PodGroup informer it reads. The in-tree registry table calls it.
#pragma once

namespace koord::roles::scheduler {
class PluginRegistry;
}

namespace koord::roles::scheduler::coscheduling {

void registerCoscheduling(PluginRegistry& registry);

}  // namespace koord::roles::scheduler::coscheduling
