// Whether a pod could run on a node, as the community descheduler's NodeFit decides it before an
// eviction: a pod is only moved when some other node would take it.
#pragma once

#include <string>
#include <vector>

#include "framework/types.h"

namespace koord::roles::descheduler {

/// The node's allocatable less what the pods on it (not finished) request.
ResourceAmounts freeOn(const Snapshot& snapshot, const Node& node);

/// `pod` fits `node`: nodeSelector and required node affinity match, every NoSchedule and
/// NoExecute taint tolerated, the node schedulable and Ready, and each resource the pod requests
/// within what is free (pods count as one). `why`, when given, names the first failed rule.
bool podFitsNode(const Snapshot& snapshot, const Pod& pod, const Node& node,
                 std::string* why = nullptr);

/// The same with the node's free resources given (freeOn), for a caller that asks about one
/// node for many pods.
bool podFitsNode(const Pod& pod, const Node& node, const ResourceAmounts& free,
                 std::string* why = nullptr);

/// Some node of `nodes` other than the pod's own fits it.
bool podFitsAnyOtherNode(const Snapshot& snapshot, const Pod& pod,
                         const std::vector<const Node*>& nodes);

/// Finished pods (Succeeded, Failed) hold no resources on their node.
inline bool podFinished(const Pod& pod) {
  return pod.phase == PodPhase::kSucceeded || pod.phase == PodPhase::kFailed;
}

}  // namespace koord::roles::descheduler
