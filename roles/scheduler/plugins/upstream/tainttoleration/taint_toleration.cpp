#include "plugins/upstream/tainttoleration/taint_toleration.h"

#include <algorithm>

#include <fmt/format.h>

#include "plugins/upstream/args_decode.h"
#include "plugins/upstream/normalize_score.h"

namespace koord::roles::scheduler::upstream {

namespace {

constexpr std::string_view kPreScoreStateKey = "PreScoreTaintToleration";
const StateKey kPreScoreState{kPreScoreStateKey};

struct PreScoreState final : StateData {
  std::vector<kube::Toleration> tolerations_prefer_no_schedule;
  std::unique_ptr<StateData> clone() const override {
    return std::make_unique<PreScoreState>(*this);
  }
};

}  // namespace

Status TaintToleration::filter(const CycleState&, const PodInfo& pod, const NodeInfo& node) const {
  if (!node.node)
    return Status::error("invalid nodeInfo");
  if (node.node->taints.empty())
    return Status::success();
  const kube::Taint* taint = kube::findUntoleratedTaint(node.node->taints, pod.tolerations);
  if (taint == nullptr)
    return Status::success();
  return Status::unresolvable(fmt::format(
      "node(s) had taint {{{}: {}}}, that the pod didn't tolerate", taint->key, taint->value));
}

Status TaintToleration::preScore(CycleState& state, const PodInfo& pod,
                                 const std::vector<const NodeInfo*>& nodes) {
  if (nodes.empty())
    return Status::success();
  // Without a PreferNoSchedule taint on any candidate every node scores 0 and normalises to the
  // same maximum: proven by a look at each candidate's taints (already in cache from Filter),
  // cheaper than scoring them, so the plugin is left out (a Skip later upstream does not have).
  const bool any_prefer = std::any_of(nodes.begin(), nodes.end(), [](const NodeInfo* n) {
    return !n->node ||
           std::any_of(n->node->taints.begin(), n->node->taints.end(), [](const kube::Taint& t) {
             return t.effect == kube::TaintEffect::kPreferNoSchedule;
           });
  });
  if (!any_prefer)
    return Status::skip();
  // Only tolerations that can match a PreferNoSchedule taint matter to the score; selecting
  // them once spares every node's Score the walk over the others.
  auto data = std::make_unique<PreScoreState>();
  for (const auto& t : pod.tolerations) {
    if (t.effect == kube::TaintEffect::kAll || t.effect == kube::TaintEffect::kPreferNoSchedule)
      data->tolerations_prefer_no_schedule.push_back(t);
  }
  state.write(kPreScoreState, std::move(data));
  return Status::success();
}

Status TaintToleration::score(const CycleState& state, const PodInfo&, const NodeInfo& node,
                              std::int64_t& score) const {
  if (!node.node)
    return Status::error("node not found");
  const auto* s = state.read<PreScoreState>(kPreScoreState);
  if (s == nullptr)
    return Status::error(
        fmt::format("error reading \"{}\" from cycleState: not found", kPreScoreStateKey));
  // PreScore kept only the tolerations that can match a PreferNoSchedule taint, so counting
  // here needs no second selection (nor its allocation) per node.
  std::int64_t count = 0;
  for (const auto& taint : node.node->taints) {
    if (taint.effect == kube::TaintEffect::kPreferNoSchedule &&
        !kube::tolerationsTolerateTaint(s->tolerations_prefer_no_schedule, taint))
      ++count;
  }
  score = count;
  return Status::success();
}

Status TaintToleration::normalizeScore(const CycleState&, const PodInfo&,
                                       std::vector<NodeScore>& scores) const {
  defaultNormalizeScore(kMaxNodeScore, /*reverse=*/true, scores);
  return Status::success();
}

}  // namespace koord::roles::scheduler::upstream
