// NodePreferAvoidPods (kube-scheduler 1.20, v1beta1's defaults at weight 10000): a node whose
// scheduler.alpha.kubernetes.io/preferAvoidPods annotation (Node::avoid_pods) names the pod's
// ReplicationController or ReplicaSet scores 0, every other node 100.
#pragma once

#include <string_view>

#include "framework/plugin.h"

namespace koord::roles::scheduler::upstream {

inline constexpr std::string_view kNodePreferAvoidPodsName = "NodePreferAvoidPods";

class NodePreferAvoidPods final : public ScorePlugin {
 public:
  std::string_view name() const override { return kNodePreferAvoidPodsName; }
  Status score(const CycleState& state, const PodInfo& pod, const NodeInfo& node,
               std::int64_t& score) const override;
  bool scoresEveryNodeAlike(const PodInfo& pod) const override;
};

}  // namespace koord::roles::scheduler::upstream
