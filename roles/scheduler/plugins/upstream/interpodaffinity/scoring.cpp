// InterPodAffinity's PreScore, Score and NormalizeScore.
#include <algorithm>

#include <fmt/format.h>

#include "framework/snapshot.h"
#include "plugins/upstream/interpodaffinity/matching.h"
#include "plugins/upstream/interpodaffinity/plugin.h"
#include "plugins/upstream/interpodaffinity/state.h"

namespace koord::roles::scheduler::upstream::interpodaffinity {

namespace {

Status stateNotFound() {
  return Status::error(
      fmt::format("failed to read \"{}\" from cycleState: not found", kPreScoreStateKey));
}

// `pod` matches the term: `weight` on the domain of the node hosting the term's owner or the
// matched pod (always the existing pod's node).
void addWeight(TopologyCounts& scores, const PodAffinityTerm& term, const PodInfo& pod,
               const kube::Labels& node_labels, std::int64_t weight) {
  if (!podMatchesTerm(pod, term))
    return;
  auto label = node_labels.find(term.topology_key);
  if (label != node_labels.end())
    scores.add(term.topology_key, label->second, weight);
}

void addWeighted(TopologyCounts& scores, const std::vector<WeightedPodAffinityTerm>& terms,
                 const PodInfo& pod, const kube::Labels& node_labels, std::int64_t sign) {
  for (const auto& wt : terms)
    addWeight(scores, wt.term, pod, node_labels, sign * wt.weight);
}

}  // namespace

Status InterPodAffinity::preScore(CycleState& state, const PodInfo& pod,
                                  const std::vector<const NodeInfo*>& nodes) {
  if (nodes.empty())
    return Status::success();
  const Snapshot& snapshot = handle_->snapshot();
  const bool has_preferred =
      !pod.pod_affinity.preferred.empty() || !pod.pod_anti_affinity.preferred.empty();
  const std::int64_t hard_weight = args_->hard_pod_affinity_weight;

  auto scores = std::make_shared<TopologyCounts>();
  // Without preferred terms of its own, the pod is scored only by existing pods' terms, and
  // only pods with (anti-)affinity have any: walk just those.
  const auto& walked = has_preferred ? snapshot.nodes() : snapshot.nodesWithPodAffinity();
  for (const auto& node : walked) {
    if (!node->node)
      continue;
    const kube::Labels& labels = node->node->labels;
    if (labels.empty())
      continue;
    const auto& pods = has_preferred ? node->pods : node->pods_with_affinity;
    for (const auto& existing_ptr : pods) {
      const PodInfo& existing = *existing_ptr;
      addWeighted(*scores, pod.pod_affinity.preferred, existing, labels, 1);
      addWeighted(*scores, pod.pod_anti_affinity.preferred, existing, labels, -1);
      if (hard_weight > 0) {
        for (const auto& term : existing.pod_affinity.required)
          addWeight(*scores, term, pod, labels, hard_weight);
      }
      addWeighted(*scores, existing.pod_affinity.preferred, pod, labels, 1);
      addWeighted(*scores, existing.pod_anti_affinity.preferred, pod, labels, -1);
    }
  }

  // No term touches any domain: every node would score 0 and normalise to 0, so leaving the
  // plugin out changes no placement (later upstream's Skip).
  if (scores->empty())
    return Status::skip();
  auto s = std::make_unique<PreScoreState>();
  s->scores = std::move(scores);
  state.write(kPreScoreState, std::move(s));
  return Status::success();
}

Status InterPodAffinity::score(const CycleState& state, const PodInfo&, const NodeInfo& node,
                               std::int64_t& score) const {
  if (!node.node)
    return Status::error(
        fmt::format("getting node \"{}\" from Snapshot: node is nil", node.name()));
  const auto* s = state.read<PreScoreState>(kPreScoreState);
  if (s == nullptr || s->scores == nullptr)
    return stateNotFound();
  score = s->scores->empty() ? 0 : s->scores->sumOn(node.node->labels);
  return Status::success();
}

Status InterPodAffinity::normalizeScore(const CycleState& state, const PodInfo&,
                                        std::vector<NodeScore>& scores) const {
  const auto* s = state.read<PreScoreState>(kPreScoreState);
  if (s == nullptr || s->scores == nullptr)
    return stateNotFound();
  if (s->scores->empty())
    return Status::success();

  // Zero is always inside the range: a node no term touches keeps its place between the
  // attracted and the repelled ones.
  std::int64_t max_count = 0;
  std::int64_t min_count = 0;
  for (const auto& ns : scores) {
    max_count = std::max(max_count, ns.score);
    min_count = std::min(min_count, ns.score);
  }
  const std::int64_t diff = max_count - min_count;
  for (auto& ns : scores) {
    double f = 0;
    if (diff > 0)
      f = static_cast<double>(kMaxNodeScore) *
          (static_cast<double>(ns.score - min_count) / static_cast<double>(diff));
    ns.score = static_cast<std::int64_t>(f);
  }
  return Status::success();
}

}  // namespace koord::roles::scheduler::upstream::interpodaffinity
