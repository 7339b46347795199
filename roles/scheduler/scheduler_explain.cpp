// Scheduler::explain: one pod's cycle up to its scores, on every node, for an operator (koord
// explain) rather than a placement. The same snapshot, transformers and plugins as scheduleOne.
#include <fmt/format.h>

#include "scheduler.h"

namespace koord::roles::scheduler {

kube::Expected<PodExplanation> Scheduler::explain(const PodInfo& pod) {
  Profile* profile = profileFor(pod.scheduler_name);
  if (profile == nullptr) {
    return kube::makeKubeError(
        fmt::format("no profile of this configuration is scheduler {:?}", pod.scheduler_name));
  }
  PodExplanation out;
  out.profile = profile->name;
  cache_.updateSnapshot(snapshot_);
  Framework& fw = *profile->framework;
  fw.setSnapshot(&snapshot_);
  CycleState state;
  // A reservation owner sees its reservations' room as free, as in scheduleOne; the cache's
  // NodeInfos come back when this returns.
  std::vector<std::shared_ptr<const NodeInfo>> replaced;
  struct Restore {
    Snapshot& snapshot;
    std::vector<std::shared_ptr<const NodeInfo>>& replaced;
    ~Restore() {
      for (auto& original : replaced)
        snapshot.replace(std::move(original));
    }
  } restore{snapshot_, replaced};
  std::vector<std::shared_ptr<const NodeInfo>> replacements;
  if (auto s = fw.runPreFilterTransformers(state, pod, snapshot_, replacements); !s.ok()) {
    out.pre_filter = std::move(s);
    return out;
  }
  for (auto& replacement : replacements) {
    auto kept = cache_.nodeInfo(replacement->name());
    if (kept && snapshot_.get(replacement->name()) == kept.get() &&
        snapshot_.replace(std::move(replacement)))
      replaced.push_back(std::move(kept));
  }
  if (auto s = fw.runPreFilterPlugins(state, pod); !s.ok()) {
    if (s.code() == Code::kError)
      return kube::makeKubeError(s.message());
    out.pre_filter = std::move(s);
    return out;
  }
  std::vector<const NodeInfo*> feasible;
  std::vector<std::size_t> feasible_index;
  for (const auto& node : snapshot_.nodes()) {
    PodExplanation::NodeResult r;
    r.node = node->name();
    r.filter = fw.runFilterPluginsWithNominatedPods(state, pod, *node);
    if (r.filter.code() == Code::kError)
      return kube::makeKubeError(fmt::format("node {}: {}", r.node, r.filter.message()));
    if (r.filter.ok()) {
      feasible.push_back(node.get());
      feasible_index.push_back(out.nodes.size());
    }
    out.nodes.push_back(std::move(r));
  }
  if (feasible.empty())
    return out;
  if (auto s = fw.runPreScorePlugins(state, pod, feasible); !s.ok())
    return kube::makeKubeError(s.message());
  auto scores = fw.scoreByPlugin(state, pod, feasible);
  if (!scores)
    return scores.error();
  for (std::size_t i = 0; i < feasible.size(); ++i) {
    PodExplanation::NodeResult& r = out.nodes[feasible_index[i]];
    for (const auto& part : *scores) {
      r.scores.push_back({part.plugin, part.weight, {part.scores[i]}});
      r.total += part.weight * part.scores[i];
    }
  }
  return out;
}

}  // namespace koord::roles::scheduler
