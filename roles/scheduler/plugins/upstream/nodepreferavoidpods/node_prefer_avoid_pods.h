// NodePreferAvoidPods (kube-scheduler 1.20, v1beta1's defaults at weight 10000): a node whose
// scheduler.alpha.kubernetes.io/preferAvoidPods annotation names the pod's ReplicationController
// or ReplicaSet scores 0, every other node 100.
#pragma once

#include <string_view>

#include "framework/plugin.h"

namespace koord::roles::scheduler::upstream {

inline constexpr std::string_view kNodePreferAvoidPodsName = "NodePreferAvoidPods";
inline constexpr std::string_view kAnnotationPreferAvoidPods =
    "scheduler.alpha.kubernetes.io/preferAvoidPods";

class NodePreferAvoidPods final : public ScorePlugin {
 public:
  std::string_view name() const override { return kNodePreferAvoidPodsName; }
  Status score(const CycleState& state, const PodInfo& pod, const NodeInfo& node,
               std::int64_t& score) const override;
};

/// Whether the annotation's value lists the controller (kind and UID) among its pod signatures;
/// false for a value that is not the AvoidPods JSON, as upstream then scores the node as free.
bool avoidsController(std::string_view annotation, std::string_view kind, std::string_view uid);

}  // namespace koord::roles::scheduler::upstream
