// RemovePodsViolatingNodeAffinity: node by node, the pods that break their node affinity.
#include "plugins/removepodsviolatingnodeaffinity/node_affinity.h"

#include <utility>

#include "framework/node_fit.h"
#include "koord/kube/scheduling_match.h"

namespace koord::roles::descheduler::nodeaffinity {

namespace {

std::int64_t preferredWeight(const Pod& pod, const Node& node) {
  // A term that does not compile scores nothing, as upstream treats a scoring error.
  auto score = kube::preferredSchedulingScore(pod.node_affinity->preferred, node.labels);
  return score ? *score : 0;
}

}  // namespace

bool RemovePodsViolatingNodeAffinity::violates(NodeAffinityType type, const Pod& pod,
                                               const Node& node,
                                               const std::vector<const Node*>& nodes) const {
  if (!pod.node_affinity)
    return false;
  const Snapshot& snap = handle_.snapshot();
  if (type == NodeAffinityType::kRequired) {
    // Only the affinity counts against the current node: taints and cordons are other plugins'
    // business, and the pod's own requests are already on it.
    if (!pod.node_affinity->required)
      return false;
    if (kube::podMatchesNodeSelectorAndAffinityTerms(pod.node_selector, &*pod.node_affinity,
                                                     node.labels, node.name))
      return false;
    return podFitsAnyOtherNode(snap, pod, nodes);
  }
  if (pod.node_affinity->preferred.empty())
    return false;
  // Moving only helps when a node that would take the pod scores higher than its own.
  const std::int64_t here = preferredWeight(pod, node);
  for (const Node* other : nodes) {
    if (other->name == node.name || preferredWeight(pod, *other) <= here)
      continue;
    if (podFitsNode(snap, pod, *other))
      return true;
  }
  return false;
}

Expected<void> RemovePodsViolatingNodeAffinity::deschedule(const std::vector<const Node*>& nodes) {
  // A pod evicted for one affinity type is gone for the next.
  std::set<std::string> evicted;
  for (NodeAffinityType type : args_->node_affinity_type) {
    const std::string reason = type == NodeAffinityType::kRequired
                                   ? "pod violates its required node affinity on this node"
                                   : "another node scores higher on the pod's preferred "
                                     "node affinity";
    for (const Node* node : nodes) {
      const bool more = eachPodUnderCaps(*node, [&](const Pod& pod) {
        if (podFinished(pod) || evicted.count(pod.key()) != 0)
          return;
        if (!pod_filter_.matches(pod) || !violates(type, pod, *node, nodes))
          return;
        if (!handle_.filter(pod) || !handle_.preEvictionFilter(pod))
          return;
        if (handle_.evict(pod, {std::string(name()), reason}))
          evicted.insert(pod.key());
      });
      if (!more)
        return {};
    }
  }
  return {};
}

Expected<std::shared_ptr<Plugin>> makeRemovePodsViolatingNodeAffinity(
    std::shared_ptr<const RemovePodsViolatingNodeAffinityArgs> args, FrameworkHandle& handle) {
  return pluginkit::makeFiltered<RemovePodsViolatingNodeAffinity>(std::move(args), handle);
}

}  // namespace koord::roles::descheduler::nodeaffinity
