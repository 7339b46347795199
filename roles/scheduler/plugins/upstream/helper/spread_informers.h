// The informers behind the spreading selectors: a plugin's registration that reads them
// (SelectorSpread, PodTopologySpread) declares all four under the same keys, so one runs each.
#pragma once

namespace koord::roles::scheduler {
struct PluginFactory;
}

namespace koord::roles::scheduler::upstream::helper {

/// Adds Services, ReplicationControllers (core/v1), ReplicaSets and StatefulSets (apps/v1),
/// cluster-wide, projected to SpreadingSelector under kServiceSource ... kStatefulSetSource.
void declareSpreadSelectorInformers(PluginFactory& factory);

}  // namespace koord::roles::scheduler::upstream::helper
