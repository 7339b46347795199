#include "plugins/upstream/podtopologyspread/scoring.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "plugins/upstream/podtopologyspread/args.h"

namespace koord::roles::scheduler::upstream::podtopologyspread {

double topologyNormalizingWeight(std::size_t size) {
  return std::log(static_cast<double>(size + 2));
}

PreScoreState computePreScoreState(const PodInfo& pod,
                                   const std::vector<DefaultSpreadConstraint>& defaults,
                                   const helper::SpreadSelectorIndex* selectors,
                                   const std::vector<const NodeInfo*>& candidates,
                                   const std::vector<std::shared_ptr<const NodeInfo>>& all_nodes) {
  PreScoreState s;
  s.constraints =
      buildConstraints(pod, defaults, UnsatisfiableConstraintAction::kScheduleAnyway, selectors);
  if (!s.constraints)
    return s;
  const SpreadConstraints& constraints = *s.constraints;
  const std::size_t n = constraints.size();
  s.counts.resize(n);
  s.per_node.resize(n);
  bool any_per_node = false;
  for (std::size_t i = 0; i < n; ++i) {
    s.per_node[i] = constraints[i].topology_key == kLabelHostname;
    if (s.per_node[i]) {
      any_per_node = true;
      s.counts[i].reserve(candidates.size());
    }
  }
  std::vector<std::size_t> domains(n, 0);
  std::vector<std::string_view> values(n);
  for (const NodeInfo* info : candidates) {
    if (!info->node)
      continue;
    const Node& node = *info->node;
    if (!topologyValues(node.labels, constraints, values.data())) {
      ++s.ignored_nodes;
      continue;
    }
    for (std::size_t i = 0; i < n; ++i) {
      if (s.counts[i].insert(s.per_node[i] ? std::string_view(node.name) : values[i]))
        ++domains[i];
    }
  }
  s.weights.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t size = s.per_node[i] ? candidates.size() - s.ignored_nodes : domains[i];
    s.weights[i] = topologyNormalizingWeight(size);
  }

  // One walk over the cluster's pods. Domain counts take only nodes that pass the pod's node
  // affinity and carry every key (1.20's PreScore); a hostname constraint counts the pods of
  // each scored candidate itself, which upstream does in Score: done here, the pods are read
  // once and Score looks up a number.
  PodCounter counter(constraints, pod.namespace_);
  std::vector<std::int64_t*> slots(n);
  for (const auto& info : all_nodes) {
    const Node* node = info->node.get();
    if (node == nullptr)
      continue;
    const bool fits =
        topologyValues(node->labels, constraints, values.data()) && podFitsNodeAffinity(pod, *node);
    if (!fits && !any_per_node)
      continue;
    bool any = false;
    for (std::size_t i = 0; i < n; ++i) {
      if (s.per_node[i]) {
        slots[i] = s.counts[i].find(node->name);
      } else {
        slots[i] = fits ? s.counts[i].find(values[i]) : nullptr;
      }
      any = any || slots[i] != nullptr;
    }
    if (any)
      counter.add(*info, slots);
  }
  return s;
}

std::int64_t scoreNode(const PreScoreState& s, const NodeInfo& node) {
  const Node& n = *node.node;
  const SpreadConstraints& constraints = *s.constraints;
  double score = 0;
  for (std::size_t i = 0; i < constraints.size(); ++i) {
    auto it = n.labels.find(constraints[i].topology_key);
    // A candidate without every key is one of the ignored nodes: it scores 0.
    if (it == n.labels.end())
      return 0;
    const std::int64_t* count =
        s.counts[i].find(s.per_node[i] ? std::string_view(n.name) : std::string_view(it->second));
    const double matching = count != nullptr ? static_cast<double>(*count) : 0.0;
    // maxSkew - 1 waters down the differences between domains: a larger skew is tolerated.
    score += matching * s.weights[i] + static_cast<double>(constraints[i].max_skew - 1);
  }
  return static_cast<std::int64_t>(score);
}

void normalizeScores(const PreScoreState& s, const Snapshot& snapshot,
                     std::vector<NodeScore>& scores) {
  if (s.empty()) {
    // Every raw score is 0: upstream's formula gives each node the maximum.
    for (auto& score : scores)
      score.score = kMaxNodeScore;
    return;
  }
  auto ignored = [&](std::string_view name) {
    if (s.ignored_nodes == 0)
      return false;
    const NodeInfo* info = snapshot.get(name);
    return info != nullptr && info->node && !nodeHasAllKeys(info->node->labels, *s.constraints);
  };
  constexpr std::int64_t kInvalid = -1;
  std::int64_t min_score = std::numeric_limits<std::int64_t>::max();
  std::int64_t max_score = 0;
  for (auto& score : scores) {
    if (ignored(score.name)) {
      score.score = kInvalid;
      continue;
    }
    min_score = std::min(min_score, score.score);
    max_score = std::max(max_score, score.score);
  }
  for (auto& score : scores) {
    if (score.score == kInvalid) {
      score.score = 0;
    } else if (max_score == 0) {
      score.score = kMaxNodeScore;
    } else {
      score.score = kMaxNodeScore * (max_score + min_score - score.score) / max_score;
    }
  }
}

}  // namespace koord::roles::scheduler::upstream::podtopologyspread
