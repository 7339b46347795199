// Preemption's per-node simulation (kube-scheduler 1.20's selectVictimsOnNode): the fewest, least
// important lower-priority pods whose removal lets the pod fit, PDB-protected ones spared first.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "framework/cycle_state.h"
#include "framework/framework_handle.h"
#include "framework/node_info.h"
#include "framework/pod_info.h"
#include "framework/status.h"

namespace koord::roles::scheduler::upstream {

using PodList = std::vector<std::shared_ptr<const PodInfo>>;

/// A node preemption could free, and what it would cost there.
struct Candidate {
  std::string node;
  /// Most important first (higher priority, then earlier start).
  PodList victims;
  /// Victims whose eviction would exceed a PodDisruptionBudget.
  std::int64_t num_pdb_violations = 0;
};

/// status.startTime; a pod not started yet counts as starting `now` (upstream's time.Now()), so
/// it is the least important among equals.
std::chrono::system_clock::time_point podStartTime(const PodInfo& pod,
                                                   std::chrono::system_clock::time_point now);

/// Higher priority first, then the earlier start (upstream's MoreImportantPod).
bool moreImportantPod(const PodInfo& a, const PodInfo& b,
                      std::chrono::system_clock::time_point now);

/// The budgets of each namespace a preemption attempt meets, asked of the ClusterView once per
/// namespace per attempt.
class DisruptionBudgetCache {
 public:
  explicit DisruptionBudgetCache(const ClusterView& cluster) : cluster_(cluster) {}
  const std::vector<DisruptionBudget>& forNamespace(const std::string& namespace_);

 private:
  const ClusterView& cluster_;
  std::map<std::string, std::vector<DisruptionBudget>, std::less<>> by_namespace_;
};

struct PdbSplit {
  PodList violating;
  PodList non_violating;
};

/// Upstream's filterPodsWithPDBViolation, order kept: each pod a budget selects (unless already
/// in its disrupted_pods) uses one of the budget's allowed disruptions; a pod that drives any
/// budget below zero violates it. A budget with an empty selector selects nothing (policy/v1beta1).
PdbSplit splitByPdbViolation(const PodList& pods, DisruptionBudgetCache& budgets);

struct VictimSelection {
  bool fits = false;
  /// When it fits: the victims (most important first) and their budget violations.
  Candidate candidate;
  /// When it does not: why (the filters' status, or a note), for the summary message.
  Status status;
};

inline constexpr std::string_view kNoVictimsReason = "No preemption victims found for incoming pod";

/// What makes a pod a possible victim and when a reprieved one must still go. Upstream's rules
/// (all members empty) are "lower priority" and "the pod no longer fits the node"; ElasticQuota's
/// preemption narrows the first to the preemptor's quota and adds its quota's limit to the
/// second.
struct VictimRules {
  /// Null: a lower priority than the preemptor's.
  std::function<bool(const PodInfo& preemptor, const PodInfo& candidate)> can_preempt;
  /// With the pods taken out so far (as `state` counts them): true when the preemptor still does
  /// not fit for a reason beyond the node (its quota). Null: never.
  std::function<bool(const CycleState& state, const PodInfo& preemptor)> still_blocked;
  /// The plugin whose own PreFilter refusal preemption answers (its quota check); a refusal by
  /// any other plugin leaves preemption nothing to do. Empty: none.
  std::string answers_pre_filter_of;

  bool canPreempt(const PodInfo& preemptor, const PodInfo& candidate) const {
    return can_preempt ? can_preempt(preemptor, candidate)
                       : candidate.priority < preemptor.priority;
  }
  bool stillBlocked(const CycleState& state, const PodInfo& preemptor) const {
    return still_blocked && still_blocked(state, preemptor);
  }
};

/// Simulates on `node` (a private copy, changed in place) with `state` (a private clone): removes
/// every lower-priority pod, checks the pod fits, then puts victims back, most important first
/// (budget-violating ones before the others), keeping each that still leaves room.
VictimSelection selectVictimsOnNode(const FrameworkHandle& handle, CycleState& state,
                                    const PodInfo& pod, NodeInfo& node,
                                    DisruptionBudgetCache& budgets,
                                    std::chrono::system_clock::time_point now,
                                    const VictimRules& rules = {});

}  // namespace koord::roles::scheduler::upstream
