#include "plugins/upstream/podtopologyspread/filtering.h"

#include <string>
#include <utility>

#include "plugins/upstream/podtopologyspread/pod_topology_spread.h"

namespace koord::roles::scheduler::upstream::podtopologyspread {

void CriticalPaths::update(std::string_view value, std::int32_t num) {
  int i = -1;
  if (value == paths[0].value) {
    i = 0;
  } else if (value == paths[1].value) {
    i = 1;
  }
  if (i >= 0) {
    paths[i].match_num = num;
    if (paths[0].match_num > paths[1].match_num)
      std::swap(paths[0], paths[1]);
    return;
  }
  if (num < paths[0].match_num) {
    paths[1] = paths[0];
    paths[0] = {value, num};
  } else if (num < paths[1].match_num) {
    paths[1] = {value, num};
  }
}

void PreFilterState::updateWithPod(const PodInfo& updated, const PodInfo& preemptor,
                                   const NodeInfo& node, std::int32_t delta) {
  if (empty() || updated.namespace_ != preemptor.namespace_ || !node.node)
    return;
  const kube::Labels& labels = node.node->labels;
  if (!nodeHasAllKeys(labels, *constraints))
    return;
  for (std::size_t i = 0; i < constraints->size(); ++i) {
    const SpreadConstraint& c = (*constraints)[i];
    if (!c.matches(updated))
      continue;
    // The table's key, not this node's label: the paths keep the view, and `node` may be a
    // caller's copy.
    auto [value, count] = counts[i].lookup(labels.find(c.topology_key)->second);
    // A domain PreFilter did not count is one the pod's node affinity rules out; 1.20 would
    // dereference a missing counter here, so such a node changes nothing.
    if (count == nullptr)
      continue;
    *count += delta;
    critical_paths[i].update(value, *count);
  }
}

PreFilterState computePreFilterState(const PodInfo& pod,
                                     const std::vector<DefaultSpreadConstraint>& defaults,
                                     const helper::SpreadSelectorIndex* selectors,
                                     const std::vector<std::shared_ptr<const NodeInfo>>& nodes) {
  PreFilterState s;
  s.constraints =
      buildConstraints(pod, defaults, UnsatisfiableConstraintAction::kDoNotSchedule, selectors);
  if (!s.constraints)
    return s;
  const SpreadConstraints& constraints = *s.constraints;
  const std::size_t n = constraints.size();
  s.self_match.resize(n);
  s.counts.resize(n);
  s.critical_paths.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    s.self_match[i] = constraints[i].matches(pod) ? 1 : 0;
    if (constraints[i].topology_key == kLabelHostname)
      s.counts[i].reserve(nodes.size());
  }

  // The domains: those of nodes that carry every key and pass the pod's node affinity. Each
  // node's values are kept for the counting pass, so its labels are read once.
  std::vector<std::string_view> values(nodes.size() * n);
  for (std::size_t k = 0; k < nodes.size(); ++k) {
    const Node* node = nodes[k]->node.get();
    if (node == nullptr || !topologyValues(node->labels, constraints, &values[k * n]) ||
        !podFitsNodeAffinity(pod, *node))
      continue;
    for (std::size_t i = 0; i < n; ++i)
      s.counts[i].insert(values[k * n + i]);
  }
  // 1.20 then counts the pods of every node whose value names a counted domain, without
  // checking that node's affinity or keys again: a node the pod cannot use still adds its pods
  // to its zone when another node of that zone is usable.
  PodCounter counter(constraints, pod.namespace_);
  std::vector<std::int32_t*> slots(n);
  for (std::size_t k = 0; k < nodes.size(); ++k) {
    if (!nodes[k]->node)
      continue;
    bool any = false;
    for (std::size_t i = 0; i < n; ++i) {
      slots[i] = s.counts[i].find(values[k * n + i]);
      any = any || slots[i] != nullptr;
    }
    if (any)
      counter.add(*nodes[k], slots);
  }
  for (std::size_t i = 0; i < n; ++i) {
    s.counts[i].forEach(
        [&](std::string_view value, std::int32_t num) { s.critical_paths[i].update(value, num); });
  }
  return s;
}

Status filterNode(const PreFilterState& s, const Node& node) {
  const SpreadConstraints& constraints = *s.constraints;
  for (std::size_t i = 0; i < constraints.size(); ++i) {
    const SpreadConstraint& c = constraints[i];
    auto it = node.labels.find(c.topology_key);
    if (it == node.labels.end())
      return Status::unresolvable(std::string(kErrReasonNodeLabelNotMatch));
    const std::int32_t* count = s.counts[i].find(it->second);
    const std::int64_t match = count != nullptr ? *count : 0;
    const std::int64_t skew = match + s.self_match[i] - s.critical_paths[i].minMatch();
    if (skew > c.max_skew)
      return Status::unschedulable(std::string(kErrReasonConstraintsNotMatch));
  }
  return Status::success();
}

}  // namespace koord::roles::scheduler::upstream::podtopologyspread
