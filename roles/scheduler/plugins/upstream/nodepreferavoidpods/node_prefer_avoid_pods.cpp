#include "plugins/upstream/nodepreferavoidpods/node_prefer_avoid_pods.h"

#include <algorithm>

namespace koord::roles::scheduler::upstream {
namespace {

// Only pods of a ReplicationController or ReplicaSet can be avoided.
bool avoidable(const PodInfo& pod) {
  return pod.controller_kind == "ReplicationController" || pod.controller_kind == "ReplicaSet";
}

}  // namespace

bool NodePreferAvoidPods::scoresEveryNodeAlike(const PodInfo& pod) const {
  return !avoidable(pod);
}

Status NodePreferAvoidPods::score(const CycleState&, const PodInfo& pod, const NodeInfo& node,
                                  std::int64_t& score) const {
  score = kMaxNodeScore;
  if (!node.node)
    return Status::error("node not found");
  if (!avoidable(pod))
    return Status::success();
  const auto& avoided = node.node->avoid_pods;
  if (std::any_of(avoided.begin(), avoided.end(), [&](const AvoidedController& c) {
        return c.kind == pod.controller_kind && c.uid == pod.controller_uid;
      }))
    score = kMinNodeScore;
  return Status::success();
}

}  // namespace koord::roles::scheduler::upstream
