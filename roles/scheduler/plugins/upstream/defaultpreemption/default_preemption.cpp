#include "plugins/upstream/defaultpreemption/default_preemption.h"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "extender/extender.h"
#include "framework/snapshot.h"
#include "koord/core/log.h"
#include "plugins/upstream/defaultpreemption/eligibility.h"
#include "plugins/upstream/defaultpreemption/pick_node.h"

namespace koord::roles::scheduler::upstream {

using Clock = std::chrono::system_clock;

namespace {

// "preemption: 0/N nodes are available: 2 Insufficient cpu, 1 Preemption is not helpful ...",
// as FailedScheduling counts filter reasons.
std::string summary(std::size_t all_nodes,
                    const std::map<std::string, std::size_t, std::less<>>& reasons) {
  std::vector<std::string> parts;
  parts.reserve(reasons.size());
  for (const auto& [reason, n] : reasons)
    parts.push_back(fmt::format("{} {}", n, reason));
  std::sort(parts.begin(), parts.end());
  return fmt::format("preemption: 0/{} nodes are available: {}.", all_nodes,
                     fmt::join(parts, ", "));
}

void count(std::map<std::string, std::size_t, std::less<>>& reasons, std::string_view reason,
           std::size_t n = 1) {
  auto it = reasons.find(reason);
  if (it == reasons.end())
    reasons.emplace(std::string(reason), n);
  else
    it->second += n;
}

// kube-scheduler's CallExtenders: the extenders with a preempt verb narrow the candidates (and
// may change their victims). The victims come back most important first, as the dry run leaves
// them, whatever order the extender listed them in.
Status callExtenders(Extenders& extenders, const PodInfo& pod, const Snapshot& snapshot,
                     std::vector<Candidate>& candidates, Clock::time_point now) {
  std::vector<PreemptionCandidate> asked;
  asked.reserve(candidates.size());
  for (auto& c : candidates)
    asked.push_back({std::move(c.node), std::move(c.victims), c.num_pdb_violations});
  candidates.clear();
  const Status s = extenders.processPreemption(pod, snapshot, asked);
  if (!s.ok())
    return s;
  candidates.reserve(asked.size());
  for (auto& c : asked) {
    std::stable_sort(c.victims.begin(), c.victims.end(),
                     [now](const auto& a, const auto& b) { return moreImportantPod(*a, *b, now); });
    candidates.push_back({std::move(c.node), std::move(c.victims), c.num_pdb_violations});
  }
  return Status::success();
}

}  // namespace

DefaultPreemption::DefaultPreemption(std::shared_ptr<const DefaultPreemptionArgs> args,
                                     const FrameworkHandle& handle, std::uint64_t seed)
    : args_(args ? std::move(args) : std::make_shared<const DefaultPreemptionArgs>()),
      handle_(handle),
      rng_(seed) {}

DefaultPreemption::DefaultPreemption(std::shared_ptr<const DefaultPreemptionArgs> args,
                                     const FrameworkHandle& handle, std::uint64_t seed,
                                     std::string name, VictimRules rules)
    : DefaultPreemption(std::move(args), handle, seed) {
  name_ = std::move(name);
  rules_ = std::move(rules);
}

std::size_t DefaultPreemption::numCandidates(std::size_t num_nodes) const {
  std::size_t n = num_nodes * static_cast<std::size_t>(args_->min_candidate_nodes_percentage) / 100;
  n = std::max(n, static_cast<std::size_t>(args_->min_candidate_nodes_absolute));
  return std::min(n, num_nodes);
}

DryRunResult DefaultPreemption::dryRunPreemption(const CycleState& state, const PodInfo& pod,
                                                 const std::vector<const NodeInfo*>& nodes,
                                                 std::size_t offset, std::size_t num_candidates,
                                                 Clock::time_point now) const {
  DryRunResult out;
  DisruptionBudgetCache budgets(handle_.cluster());
  std::vector<Candidate> violating;
  std::size_t non_violating = 0;
  const std::size_t n = nodes.size();
  for (std::size_t i = 0; i < n; ++i) {
    const NodeInfo& original = *nodes[(offset + i) % n];
    ++out.visited;
    // Nothing to evict here: skip the copies (the simulation would find no victims either).
    const bool any_lower = std::any_of(original.pods.begin(), original.pods.end(),
                                       [&](const auto& p) { return rules_.canPreempt(pod, *p); });
    if (!any_lower) {
      count(out.reasons, kNoVictimsReason);
      continue;
    }
    NodeInfo node = original;
    CycleState state_copy = state.clone();
    VictimSelection sel = selectVictimsOnNode(handle_, state_copy, pod, node, budgets, now, rules_);
    if (!sel.fits) {
      for (const auto& r : sel.status.reasons())
        count(out.reasons, r);
      continue;
    }
    if (sel.candidate.num_pdb_violations == 0) {
      if (non_violating < num_candidates) {
        out.candidates.push_back(std::move(sel.candidate));
        ++non_violating;
      }
    } else if (violating.size() < num_candidates) {
      violating.push_back(std::move(sel.candidate));
    }
    if (non_violating > 0 && non_violating + violating.size() >= num_candidates)
      break;
  }
  for (auto& c : violating)
    out.candidates.push_back(std::move(c));
  return out;
}

Status DefaultPreemption::prepareCandidate(const Candidate& candidate, const PodInfo& pod) const {
  const ClusterView& cluster = handle_.cluster();
  for (const auto& victim : candidate.victims) {
    if (auto r = cluster.deletePod(*victim); !r) {
      KOORD_LOG_ERROR("preemption: deleting victim {} on node {}: {}", victim->key(),
                      candidate.node, r.error().message);
      return Status::error(fmt::format("preempting pod {} on node {}: {}", victim->key(),
                                       candidate.node, r.error().message));
    }
  }
  // Lower-priority pods nominated here may no longer fit: clearing their nomination sends them
  // back to look elsewhere. Pods whose status has no nomination yet have nothing to clear.
  for (const auto& p : cluster.nominatedPodsForNode(candidate.node)) {
    if (p->priority >= pod.priority || p->nominated_node_name.empty())
      continue;
    if (auto r = cluster.clearNominatedNodeName(*p); !r)
      KOORD_LOG_WARNING("preemption: cannot clear the nominated node of {}: {}", p->key(),
                        r.error().message);
  }
  return Status::success();
}

Status DefaultPreemption::postFilter(CycleState& state, const PodInfo& pod,
                                     const NodeStatusMap& filtered_node_status,
                                     PostFilterResult& result) {
  const Snapshot& snapshot = handle_.snapshot();
  // After a PreFilter refusal the filters have no state to judge victims with: kube-scheduler's
  // dry run fails on every node there, and here no node is tried.
  const bool unresolvable = !state.pre_filter_rejected_by.empty() &&
                            state.pre_filter_rejected_by != rules_.answers_pre_filter_of;
  if (!unresolvable) {
    if (auto why = notEligibleToPreempt(pod, snapshot, filtered_node_status))
      return Status::unschedulable(std::string(*why));
  }
  if (snapshot.size() == 0)
    return Status::error("no nodes available to schedule pods");

  const auto potential = unresolvable
                             ? std::vector<const NodeInfo*>{}
                             : nodesWherePreemptionMightHelp(snapshot, filtered_node_status);
  std::map<std::string, std::size_t, std::less<>> reasons;
  if (potential.size() < snapshot.size())
    count(reasons, kPreemptionNotHelpful, snapshot.size() - potential.size());
  if (potential.empty()) {
    // The pod's old nomination cannot come true either: let it go.
    if (!pod.nominated_node_name.empty()) {
      if (auto r = handle_.cluster().clearNominatedNodeName(pod); !r)
        KOORD_LOG_WARNING("preemption: cannot clear the nominated node of {}: {}", pod.key(),
                          r.error().message);
    }
    return Status::unschedulable(summary(snapshot.size(), reasons));
  }

  const auto now = Clock::now();
  const std::size_t offset =
      std::uniform_int_distribution<std::size_t>(0, potential.size() - 1)(rng_);
  DryRunResult run =
      dryRunPreemption(state, pod, potential, offset, numCandidates(potential.size()), now);
  if (run.candidates.empty()) {
    for (const auto& [reason, n] : run.reasons)
      count(reasons, reason, n);
    return Status::unschedulable(summary(snapshot.size(), reasons));
  }
  if (Extenders* extenders = handle_.extenders();
      extenders != nullptr && extenders->preemptsFor(pod)) {
    // A required extender's failure ends the attempt with no nomination, as upstream.
    if (auto s = callExtenders(*extenders, pod, snapshot, run.candidates, now); !s.ok())
      return s;
    if (run.candidates.empty())
      return Status::unschedulable("preemption: no candidate node for preemption");
  }
  const Candidate& best = run.candidates[pickOneNodeForPreemption(run.candidates, now)];
  if (auto s = prepareCandidate(best, pod); !s.ok())
    return s;
  result.nominated_node_name = best.node;
  return Status::success();
}

}  // namespace koord::roles::scheduler::upstream
