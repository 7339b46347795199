#include "plugins/upstream/defaultpreemption/victims.h"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "koord/core/log.h"

namespace koord::roles::scheduler::upstream {

using Clock = std::chrono::system_clock;

Clock::time_point podStartTime(const PodInfo& pod, Clock::time_point now) {
  return pod.start_time ? *pod.start_time : now;
}

bool moreImportantPod(const PodInfo& a, const PodInfo& b, Clock::time_point now) {
  if (a.priority != b.priority)
    return a.priority > b.priority;
  return podStartTime(a, now) < podStartTime(b, now);
}

const std::vector<DisruptionBudget>& DisruptionBudgetCache::forNamespace(
    const std::string& namespace_) {
  auto it = by_namespace_.find(namespace_);
  if (it == by_namespace_.end())
    it = by_namespace_.emplace(namespace_, cluster_.disruptionBudgets(namespace_)).first;
  return it->second;
}

PdbSplit splitByPdbViolation(const PodList& pods, DisruptionBudgetCache& budgets) {
  PdbSplit out;
  // Allowed disruptions left per budget, counted down over this node's victims only.
  std::vector<std::pair<const DisruptionBudget*, std::int64_t>> left;
  for (const auto& pod : pods) {
    bool violated = false;
    // A pod without labels matches no budget's (non-empty) selector.
    if (!pod->labels.empty()) {
      for (const auto& pdb : budgets.forNamespace(pod->namespace_)) {
        if (pdb.selector.empty() || pdb.selector.matchesNothing() ||
            !pdb.selector.matches(pod->labels))
          continue;
        // Already counted by the API server's eviction: no second decrement.
        if (std::find(pdb.disrupted_pods.begin(), pdb.disrupted_pods.end(), pod->name) !=
            pdb.disrupted_pods.end())
          continue;
        auto slot =
            std::find_if(left.begin(), left.end(), [&](const auto& e) { return e.first == &pdb; });
        if (slot == left.end()) {
          left.emplace_back(&pdb, pdb.disruptions_allowed);
          slot = std::prev(left.end());
        }
        if (--slot->second < 0)
          violated = true;
      }
    }
    (violated ? out.violating : out.non_violating).push_back(pod);
  }
  return out;
}

namespace {

Status removeFrom(const FrameworkHandle& handle, CycleState& state, const PodInfo& pod,
                  NodeInfo& node, const PodInfo& victim) {
  if (!node.removePod(victim.uid))
    return Status::error(
        fmt::format("pod {} (uid {}) is not on node {}", victim.key(), victim.uid, node.name()));
  return handle.runPreFilterRemovePod(state, pod, victim, node);
}

Status addTo(const FrameworkHandle& handle, CycleState& state, const PodInfo& pod, NodeInfo& node,
             const std::shared_ptr<const PodInfo>& victim) {
  node.addPod(victim);
  return handle.runPreFilterAddPod(state, pod, *victim, node);
}

VictimSelection notCandidate(Status why) {
  VictimSelection out;
  out.status = std::move(why);
  return out;
}

VictimSelection failed(const NodeInfo& node, std::string_view what, const Status& s) {
  KOORD_LOG_WARNING("preemption: {} on node {}: {}", what, node.name(), s.message());
  return notCandidate(s);
}

}  // namespace

VictimSelection selectVictimsOnNode(const FrameworkHandle& handle, CycleState& state,
                                    const PodInfo& pod, NodeInfo& node,
                                    DisruptionBudgetCache& budgets, Clock::time_point now,
                                    const VictimRules& rules) {
  PodList potential;
  for (const auto& p : node.pods) {
    if (rules.canPreempt(pod, *p))
      potential.push_back(p);
  }
  if (potential.empty())
    return notCandidate(Status::unschedulable(std::string(kNoVictimsReason)));
  for (const auto& p : potential) {
    if (auto s = removeFrom(handle, state, pod, node, *p); !s.ok())
      return failed(node, "removing " + p->key(), s);
  }
  // Affinity to a victim is not reconsidered (upstream's choice): if the pod does not fit with
  // every lower-priority pod gone, no subset helps.
  if (auto s = handle.runFilterPluginsWithNominatedPods(state, pod, node); !s.ok()) {
    if (s.code() == Code::kError)
      KOORD_LOG_WARNING("preemption: selecting victims on node {}: {}", node.name(), s.message());
    return notCandidate(std::move(s));
  }
  if (rules.stillBlocked(state, pod))
    return notCandidate(Status::unschedulable(std::string(kNoVictimsReason)));

  std::stable_sort(potential.begin(), potential.end(),
                   [&](const auto& a, const auto& b) { return moreImportantPod(*a, *b, now); });
  const PdbSplit split = splitByPdbViolation(potential, budgets);

  VictimSelection out;
  out.candidate.node = node.name();
  PodList& victims = out.candidate.victims;
  // Puts `p` back; when the pod then no longer fits, takes it out again as a victim.
  auto reprieve = [&](const std::shared_ptr<const PodInfo>& p, bool& kept) -> Status {
    if (auto s = addTo(handle, state, pod, node, p); !s.ok())
      return s;
    kept = handle.runFilterPluginsWithNominatedPods(state, pod, node).ok() &&
           !rules.stillBlocked(state, pod);
    if (kept)
      return Status::success();
    victims.push_back(p);
    return removeFrom(handle, state, pod, node, *p);
  };
  for (const auto& p : split.violating) {
    bool kept = false;
    if (auto s = reprieve(p, kept); !s.ok())
      return failed(node, "reprieving " + p->key(), s);
    if (!kept)
      ++out.candidate.num_pdb_violations;
  }
  for (const auto& p : split.non_violating) {
    bool kept = false;
    if (auto s = reprieve(p, kept); !s.ok())
      return failed(node, "reprieving " + p->key(), s);
  }
  // Two runs of reprieves interleave priorities; the node pick reads the first victim as the
  // most important (later upstream sorts here too).
  if (!split.violating.empty() && !split.non_violating.empty()) {
    std::stable_sort(victims.begin(), victims.end(),
                     [&](const auto& a, const auto& b) { return moreImportantPod(*a, *b, now); });
  }
  out.fits = true;
  return out;
}

}  // namespace koord::roles::scheduler::upstream
