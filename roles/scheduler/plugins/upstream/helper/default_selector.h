// kube-scheduler 1.20's helper.DefaultSelector (SelectorSpread, PodTopologySpread's defaults): the
// pods a pod is spread against, from the Services, RCs, ReplicaSets and StatefulSets selecting it.
#pragma once

#include <array>
#include <memory>

#include "framework/object_source.h"
#include "framework/pod_info.h"
#include "koord/kube/labels.h"
#include "plugins/upstream/helper/spread_selectors.h"

namespace koord::roles::scheduler {
class ClusterView;
}

namespace koord::roles::scheduler::upstream::helper {

/// The four kinds' objects indexed by namespace and by one label each selector requires, kept
/// current by the sources' events, so that a pod's default selector costs a few hash lookups
/// rather than a walk over its namespace's Services and ReplicaSets.
class SpreadSelectorIndex {
 public:
  struct Sources {
    const ObjectSource<SpreadingSelector>* services = nullptr;
    const ObjectSource<SpreadingSelector>* replication_controllers = nullptr;
    const ObjectSource<SpreadingSelector>* replica_sets = nullptr;
    const ObjectSource<SpreadingSelector>* stateful_sets = nullptr;
  };

  /// The sources the view holds under the helper's keys; null for those it lacks (a kind whose
  /// source is missing counts as having no objects).
  static Sources sourcesOf(const ClusterView& cluster);

  /// Subscribes to each source and takes in what it holds already. Construct before the
  /// informers start (sources take subscribers only then), as plugins are.
  explicit SpreadSelectorIndex(const Sources& sources);

  /// upstream's DefaultSelector(pod): the union of the selectors of the Services and RCs that
  /// select the pod (merged as one label set), ANDed with the requirements of every ReplicaSet
  /// and StatefulSet that selects it; all in the pod's namespace, and the controllers only for
  /// a pod with labels (client-go's listers find none for a pod without). Empty (matching
  /// everything) when nothing selects the pod: callers then apply no default spreading.
  /// Thread-safe against the sources' events.
  kube::Selector defaultSelector(const PodInfo& pod) const;

  /// How many objects with a selector are indexed (for tests and logs).
  std::size_t size() const;

  struct State;

 private:
  std::shared_ptr<State> state_;  // shared with the source handlers, which may outlive us
};

/// index->defaultSelector(pod), or the empty selector without an index.
kube::Selector defaultSelector(const PodInfo& pod, const SpreadSelectorIndex* index);

}  // namespace koord::roles::scheduler::upstream::helper
