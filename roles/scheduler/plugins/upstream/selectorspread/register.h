// SelectorSpread's entry in the plugin registry: upstream's name, no args, and the informers of
// the Services, RCs, ReplicaSets and StatefulSets it reads.
#pragma once

namespace koord::roles::scheduler {
class PluginRegistry;
}

namespace koord::roles::scheduler::upstream {

void registerSelectorSpread(PluginRegistry& registry);

}  // namespace koord::roles::scheduler::upstream
