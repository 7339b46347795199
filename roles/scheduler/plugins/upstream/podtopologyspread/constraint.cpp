#include "plugins/upstream/podtopologyspread/constraint.h"

#include <algorithm>

#include "koord/kube/scheduling_match.h"

namespace koord::roles::scheduler::upstream::podtopologyspread {

std::shared_ptr<const SpreadConstraints> buildConstraints(
    const PodInfo& pod, const std::vector<DefaultSpreadConstraint>& defaults,
    UnsatisfiableConstraintAction action, const helper::SpreadSelectorIndex* selectors) {
  SpreadConstraints out;
  if (!pod.topology_spread_constraints.empty()) {
    for (const auto& c : pod.topology_spread_constraints) {
      if (c.when_unsatisfiable == action)
        out.push_back({c.max_skew, c.topology_key, c.label_selector});
    }
  } else if (selectors != nullptr &&
             std::any_of(defaults.begin(), defaults.end(),
                         [&](const auto& c) { return c.when_unsatisfiable == action; })) {
    // Looked up once per pod and point, and only when a default constraint would use it.
    const kube::Selector selector = selectors->defaultSelector(pod);
    if (!selector.empty()) {
      for (const auto& c : defaults) {
        if (c.when_unsatisfiable == action)
          out.push_back({c.max_skew, c.topology_key, selector});
      }
    }
  }
  if (out.empty())
    return nullptr;
  return std::make_shared<const SpreadConstraints>(std::move(out));
}

bool nodeHasAllKeys(const kube::Labels& node_labels, const SpreadConstraints& constraints) {
  for (const auto& c : constraints) {
    if (node_labels.find(c.topology_key) == node_labels.end())
      return false;
  }
  return true;
}

bool topologyValues(const kube::Labels& node_labels, const SpreadConstraints& constraints,
                    std::string_view* values) {
  bool all = true;
  for (std::size_t i = 0; i < constraints.size(); ++i) {
    auto it = node_labels.find(constraints[i].topology_key);
    if (it == node_labels.end()) {
      values[i] = {};
      all = false;
    } else {
      values[i] = it->second;
    }
  }
  return all;
}

PodCounter::PodCounter(const SpreadConstraints& constraints, std::string_view ns)
    : constraints_(constraints),
      namespace_(ns),
      same_as_(constraints.size()),
      matched_(constraints.size(), 0) {
  for (std::size_t i = 0; i < constraints.size(); ++i) {
    same_as_[i] = i;
    for (std::size_t j = 0; j < i; ++j) {
      if (constraints[j].selector == constraints[i].selector) {
        same_as_[i] = j;
        break;
      }
    }
  }
}

bool podFitsNodeAffinity(const PodInfo& pod, const Node& node) {
  const kube::NodeAffinity* affinity = pod.node_affinity ? &*pod.node_affinity : nullptr;
  if (pod.node_selector.empty() && (affinity == nullptr || !affinity->required))
    return true;
  return kube::podMatchesNodeSelectorAndAffinityTerms(pod.node_selector, affinity, node.labels,
                                                      node.name);
}

}  // namespace koord::roles::scheduler::upstream::podtopologyspread
