#include "runtime/schedule_pod.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "extender/extender.h"
#include "framework/snapshot.h"
#include "runtime/framework.h"

namespace koord::roles::scheduler {

std::size_t numFeasibleNodesToFind(std::size_t all_nodes, std::int32_t percentage) {
  constexpr std::size_t kMinFeasibleNodes = 100;
  constexpr std::int64_t kMinFeasiblePercentage = 5;
  if (all_nodes < kMinFeasibleNodes || percentage >= 100)
    return all_nodes;
  std::int64_t adaptive = percentage;
  if (adaptive <= 0) {
    adaptive = 50 - static_cast<std::int64_t>(all_nodes / 125);
    adaptive = std::max(adaptive, kMinFeasiblePercentage);
  }
  const auto n = static_cast<std::size_t>(static_cast<std::int64_t>(all_nodes) * adaptive / 100);
  return std::max(n, kMinFeasibleNodes);
}

std::vector<std::string> FitError::unschedulablePlugins() const {
  std::vector<std::string> out;
  if (!pre_filter.ok()) {
    if (!pre_filter.plugin().empty())
      out.push_back(pre_filter.plugin());
    return out;
  }
  for (const auto& [node, status] : statuses) {
    if (!status.ok() && !status.plugin().empty() &&
        std::find(out.begin(), out.end(), status.plugin()) == out.end())
      out.push_back(status.plugin());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string FitError::message() const {
  std::map<std::string, std::size_t> counts;
  if (!pre_filter.ok()) {
    for (const auto& r : pre_filter.reasons())
      counts[r] += num_all_nodes;
  }
  for (const auto& [node, status] : statuses) {
    for (const auto& r : status.reasons())
      ++counts[r];
  }
  std::vector<std::string> parts;
  parts.reserve(counts.size());
  for (const auto& [reason, n] : counts)
    parts.push_back(fmt::format("{} {}", n, reason));
  std::sort(parts.begin(), parts.end());
  return fmt::format("0/{} nodes are available: {}.", num_all_nodes, fmt::join(parts, ", "));
}

PodScheduler::PodScheduler(Framework& framework, std::int32_t percentage, std::uint64_t seed)
    : framework_(framework), percentage_(percentage), rng_(seed) {}

ScheduleOutcome PodScheduler::schedule(CycleState& state, const PodInfo& pod,
                                       const Snapshot& snapshot) {
  framework_.setSnapshot(&snapshot);
  const std::size_t all = snapshot.size();
  if (all == 0)
    return FitError{0, Status::unschedulable("no nodes available to schedule pods"), {}};

  auto pre = framework_.runPreFilterPlugins(state, pod);
  if (!pre.ok()) {
    if (pre.isUnschedulable()) {
      state.pre_filter_rejected_by = pre.plugin().empty() ? "?" : pre.plugin();
      return FitError{all, std::move(pre), {}};
    }
    return pre;
  }
  const std::size_t wanted = numFeasibleNodesToFind(all, percentage_);
  auto outcome = framework_.findNodesThatPassFilters(state, pod, next_start_ % all, wanted);
  if (!outcome.error.ok())
    return std::move(outcome.error);
  next_start_ = (next_start_ + outcome.processed) % all;
  // The window may have stopped before a preferred node (an owner pod's reservation): filter
  // those too, so that Score can pick them.
  for (const auto& name : state.preferred_nodes) {
    const NodeInfo* node = snapshot.get(name);
    if (node == nullptr || outcome.failed.contains(name) ||
        std::find(outcome.feasible.begin(), outcome.feasible.end(), node) != outcome.feasible.end())
      continue;
    auto s = framework_.runFilterPluginsWithNominatedPods(state, pod, *node);
    if (s.ok())
      outcome.feasible.push_back(node);
    else if (s.code() == Code::kError)
      return s;
  }
  // kube-scheduler's findNodesThatPassExtenders: the extenders see what the plugins passed.
  if (extenders_ != nullptr && !outcome.feasible.empty()) {
    auto s = extenders_->filter(pod, outcome.feasible, outcome.failed);
    if (!s.ok())
      return s;
  }
  if (outcome.feasible.empty())
    return FitError{all, Status(), std::move(outcome.failed)};

  ScheduleResult result;
  result.evaluated_nodes = outcome.processed;
  result.feasible_nodes = outcome.feasible.size();
  if (outcome.feasible.size() == 1) {
    result.node = outcome.feasible.front()->name();
    return result;
  }
  auto pre_score = framework_.runPreScorePlugins(state, pod, outcome.feasible);
  if (!pre_score.ok())
    return pre_score;
  auto scores = framework_.runScorePlugins(state, pod, outcome.feasible);
  if (!scores)
    return Status::error(scores.error().message);
  if (extenders_ != nullptr)
    extenders_->prioritize(pod, outcome.feasible, *scores);
  // The highest total; ties broken uniformly at random, as upstream. Upstream samples a
  // reservoir (a random draw per tie); counting the ties first and drawing once picks with the
  // same odds, and many nodes tie (empty nodes score alike).
  std::int64_t best = -1;
  std::uint64_t ties = 0;
  for (const auto& s : *scores) {
    if (s.score > best) {
      best = s.score;
      ties = 1;
    } else if (s.score == best) {
      ++ties;
    }
  }
  std::uint64_t pick = std::uniform_int_distribution<std::uint64_t>(0, ties - 1)(rng_);
  for (const auto& s : *scores) {
    if (s.score == best && pick-- == 0) {
      result.node = std::string(s.name);
      break;
    }
  }
  return result;
}

}  // namespace koord::roles::scheduler
