// The objects whose selectors define a pod's default spreading (Services, ReplicationControllers,
// ReplicaSets, StatefulSets), each projected to its namespace, name and selector, and their keys.
#pragma once

#include <boost/json/fwd.hpp>

#include <cstddef>
#include <string>
#include <string_view>

#include "koord/kube/error.h"
#include "koord/kube/labels.h"

namespace koord::roles::scheduler::upstream::helper {

/// ClusterView::source<SpreadingSelector> keys, one informer each (group/version/resource).
inline constexpr std::string_view kServiceSource = "v1/services";
inline constexpr std::string_view kReplicationControllerSource = "v1/replicationcontrollers";
inline constexpr std::string_view kReplicaSetSource = "apps/v1/replicasets";
inline constexpr std::string_view kStatefulSetSource = "apps/v1/statefulsets";

/// No API object needs more terms than this; more is refused as malformed rather than matched
/// against every pod of a cycle.
inline constexpr std::size_t kMaxSelectorTerms = 256;

/// What default spreading reads of one such object.
struct SpreadingSelector {
  std::string namespace_;
  std::string name;
  /// Services and ReplicationControllers: their spec.selector map as equalities.
  /// ReplicaSets and StatefulSets: metav1.LabelSelectorAsSelector of spec.selector.
  /// Matches nothing when the object selects no pod: a nil selector, or an empty one (listers
  /// skip empty RC, RS and SS selectors; an empty Service selector adds nothing to a union).
  kube::Selector selector;

  /// "namespace/name", the informer's key.
  std::string key() const { return namespace_ + "/" + name; }
};

/// Projections for the informers; errors name the field ("spec.selector.matchLabels: ...").
kube::Expected<SpreadingSelector> decodeServiceSelector(const boost::json::value& v);
kube::Expected<SpreadingSelector> decodeReplicationControllerSelector(const boost::json::value& v);
kube::Expected<SpreadingSelector> decodeReplicaSetSelector(const boost::json::value& v);
kube::Expected<SpreadingSelector> decodeStatefulSetSelector(const boost::json::value& v);

}  // namespace koord::roles::scheduler::upstream::helper
