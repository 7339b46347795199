#include "plugins/upstream/podtopologyspread/pod_topology_spread.h"

#include <boost/json.hpp>

#include <fmt/format.h>

#include "framework/framework_handle.h"
#include "framework/snapshot.h"
#include "plugins/upstream/podtopologyspread/filtering.h"
#include "plugins/upstream/podtopologyspread/scoring.h"

namespace koord::roles::scheduler::upstream {

namespace {

namespace pts = podtopologyspread;

// kube-scheduler's wording, so that events read the same.
Status missingState(std::string_view key, bool pre_score) {
  return Status::error(
      fmt::format("{}reading \"{}\" from cycleState: not found", pre_score ? "error " : "", key));
}

}  // namespace

PodTopologySpread::PodTopologySpread(std::shared_ptr<const PodTopologySpreadArgs> args,
                                     const FrameworkHandle& handle)
    : args_(args ? std::move(args) : std::make_shared<const PodTopologySpreadArgs>()),
      handle_(handle) {
  if (!args_->effectiveDefaults().empty()) {
    selectors_ = std::make_unique<helper::SpreadSelectorIndex>(
        helper::SpreadSelectorIndex::sourcesOf(handle.cluster()));
  }
}

Status PodTopologySpread::preFilter(CycleState& state, const PodInfo& pod) {
  // Pods without DoNotSchedule constraints skip the snapshot walk (buildConstraints answers
  // null before any node is looked at) and the plugin's Filter, which would pass every node,
  // and AddPod/RemovePod, which would change nothing (later upstream's Skip).
  auto s = std::make_unique<pts::PreFilterState>(pts::computePreFilterState(
      pod, args_->effectiveDefaults(), selectors_.get(), handle_.snapshot().nodes()));
  if (s->empty())
    return Status::skip();
  state.write(pts::kPreFilterState, std::move(s));
  return Status::success();
}

Status PodTopologySpread::updateWithPod(CycleState& state, const PodInfo& pod_to_schedule,
                                        const PodInfo& updated, const NodeInfo& node,
                                        std::int32_t delta) const {
  auto* s = state.readMutable<pts::PreFilterState>(pts::kPreFilterState);
  if (s == nullptr)
    return missingState(pts::kPreFilterStateKey, false);
  s->updateWithPod(updated, pod_to_schedule, node, delta);
  return Status::success();
}

Status PodTopologySpread::addPod(CycleState& state, const PodInfo& pod_to_schedule,
                                 const PodInfo& pod_to_add, const NodeInfo& node) const {
  return updateWithPod(state, pod_to_schedule, pod_to_add, node, 1);
}

Status PodTopologySpread::removePod(CycleState& state, const PodInfo& pod_to_schedule,
                                    const PodInfo& pod_to_remove, const NodeInfo& node) const {
  return updateWithPod(state, pod_to_schedule, pod_to_remove, node, -1);
}

Status PodTopologySpread::filter(const CycleState& state, const PodInfo&,
                                 const NodeInfo& node) const {
  if (!node.node)
    return Status::error("node not found");
  const auto* s = state.read<pts::PreFilterState>(pts::kPreFilterState);
  if (s == nullptr)
    return missingState(pts::kPreFilterStateKey, false);
  if (s->empty())
    return Status::success();
  return pts::filterNode(*s, *node.node);
}

Status PodTopologySpread::preScore(CycleState& state, const PodInfo& pod,
                                   const std::vector<const NodeInfo*>& nodes) {
  const auto& all = handle_.snapshot().nodes();
  if (nodes.empty() || all.empty())
    return Status::success();
  auto s = std::make_unique<pts::PreScoreState>(
      pts::computePreScoreState(pod, args_->effectiveDefaults(), selectors_.get(), nodes, all));
  // Without ScheduleAnyway constraints every node would score 0 and normalise to the same
  // maximum: leaving the plugin out changes no placement (later upstream's Skip).
  if (s->empty())
    return Status::skip();
  state.write(pts::kPreScoreState, std::move(s));
  return Status::success();
}

Status PodTopologySpread::score(const CycleState& state, const PodInfo&, const NodeInfo& node,
                                std::int64_t& score) const {
  score = 0;
  const auto* s = state.read<pts::PreScoreState>(pts::kPreScoreState);
  if (s == nullptr)
    return missingState(pts::kPreScoreStateKey, true);
  if (s->empty())
    return Status::success();
  if (!node.node)
    return Status::error("node not found");
  score = pts::scoreNode(*s, node);
  return Status::success();
}

Status PodTopologySpread::normalizeScore(const CycleState& state, const PodInfo&,
                                         std::vector<NodeScore>& scores) const {
  const auto* s = state.read<pts::PreScoreState>(pts::kPreScoreState);
  if (s == nullptr)
    return missingState(pts::kPreScoreStateKey, true);
  pts::normalizeScores(*s, handle_.snapshot(), scores);
  return Status::success();
}

}  // namespace koord::roles::scheduler::upstream
