// RemovePodsViolatingInterPodAntiAffinity: the pods of the given nodes checked against each
// other, lowest priority first on each node.
#include "plugins/removepodsviolatinginterpodantiaffinity/pod_antiaffinity.h"

#include <algorithm>
#include <utility>

#include "framework/node_fit.h"
#include "plugins/removepodsviolatinginterpodantiaffinity/pod_order.h"

namespace koord::roles::descheduler::interpodantiaffinity {

namespace {

struct Placed {
  const Pod* pod;
  const Node* node;
};

// The conflicting pod when `candidate` (on `node`) breaks an anti-affinity term, its own or
// another's, with some pod of `placed` that is not gone; nullptr otherwise.
const Pod* conflict(const Pod& candidate, const Node& node, const std::vector<Placed>& placed,
                    const std::set<const Pod*>& gone) {
  for (const Placed& other : placed) {
    if (other.pod == &candidate || gone.count(other.pod) != 0)
      continue;
    for (const PodAffinityTerm& term : candidate.required_anti_affinity) {
      if (termSelects(term, candidate.namespace_, *other.pod) &&
          sameTopology(node, *other.node, term.topology_key))
        return other.pod;
    }
    for (const PodAffinityTerm& term : other.pod->required_anti_affinity) {
      if (termSelects(term, other.pod->namespace_, candidate) &&
          sameTopology(*other.node, node, term.topology_key))
        return other.pod;
    }
  }
  return nullptr;
}

}  // namespace

bool termSelects(const PodAffinityTerm& term, std::string_view term_ns, const Pod& other) {
  const bool in_namespace = term.namespaces.empty()
                                ? other.namespace_ == term_ns
                                : std::find(term.namespaces.begin(), term.namespaces.end(),
                                            other.namespace_) != term.namespaces.end();
  return in_namespace && term.has_selector && term.selector.matches(other.labels);
}

bool sameTopology(const Node& a, const Node& b, std::string_view topology_key) {
  if (a.name == b.name)
    return true;
  auto va = a.labels.find(std::string(topology_key));
  auto vb = b.labels.find(std::string(topology_key));
  return va != a.labels.end() && vb != b.labels.end() && va->second == vb->second;
}

Expected<void> RemovePodsViolatingInterPodAntiAffinity::deschedule(
    const std::vector<const Node*>& nodes) {
  const Snapshot& snap = handle_.snapshot();
  // Every running pod of the given nodes can be in the way, whether or not the args would let
  // the plugin evict it: the scheduler sees them all.
  std::vector<Placed> placed;
  for (const Node* node : nodes) {
    for (const auto& pod : snap.podsOn(node->name)) {
      if (!podFinished(*pod))
        placed.push_back({pod.get(), node});
    }
  }
  std::set<const Pod*> gone;
  for (const Node* node : nodes) {
    std::vector<std::shared_ptr<const Pod>> pods;
    for (const auto& pod : snap.podsOn(node->name)) {
      if (!podFinished(*pod) && pod_filter_.matches(*pod))
        pods.push_back(pod);
    }
    sortPodsLowToHigh(pods);
    for (const auto& pod : pods) {
      if (handle_.totalLimitReached())
        return {};
      if (handle_.nodeLimitReached(node->name))
        break;
      const Pod* other = conflict(*pod, *node, placed, gone);
      if (other == nullptr || !handle_.filter(*pod) || !handle_.preEvictionFilter(*pod))
        continue;
      if (handle_.evict(*pod, {std::string(name()),
                               "pod violates inter-pod anti-affinity with " + other->key()}))
        gone.insert(pod.get());
    }
  }
  return {};
}

Expected<std::shared_ptr<Plugin>> makeRemovePodsViolatingInterPodAntiAffinity(
    std::shared_ptr<const RemovePodsViolatingInterPodAntiAffinityArgs> args,
    FrameworkHandle& handle) {
  return pluginkit::makeFiltered<RemovePodsViolatingInterPodAntiAffinity>(std::move(args), handle);
}

}  // namespace koord::roles::descheduler::interpodantiaffinity
