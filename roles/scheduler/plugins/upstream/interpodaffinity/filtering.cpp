// InterPodAffinity's PreFilter, AddPod/RemovePod and Filter.
#include <fmt/format.h>

#include "framework/snapshot.h"
#include "plugins/upstream/interpodaffinity/matching.h"
#include "plugins/upstream/interpodaffinity/plugin.h"
#include "plugins/upstream/interpodaffinity/state.h"

namespace koord::roles::scheduler::upstream::interpodaffinity {

namespace {

Status stateNotFound() {
  return Status::error(
      fmt::format("error reading \"{}\" from cycleState: not found", kPreFilterStateKey));
}

Status failure(Code code, std::string_view reason) {
  return Status(
      code, std::vector<std::string>{std::string(kErrReasonAffinityNotMatch), std::string(reason)});
}

// Every topology key of the pod's required affinity terms must exist on the node, and each
// domain must hold a matching pod, unless no pod anywhere matches and the pod matches its own
// terms (the first of a group).
bool satisfiesPodAffinity(const PreFilterState& s, const PodInfo& pod, const kube::Labels& labels) {
  bool pods_exist = true;
  for (const auto& term : pod.pod_affinity.required) {
    auto label = labels.find(term.topology_key);
    if (label == labels.end())
      return false;
    if (s.affinity.get(term.topology_key, label->second) <= 0)
      pods_exist = false;
  }
  return pods_exist || (s.affinity.empty() && s.pod_matches_own_affinity);
}

bool satisfiesPodAntiAffinity(const PreFilterState& s, const PodInfo& pod,
                              const kube::Labels& labels) {
  for (const auto& term : pod.pod_anti_affinity.required) {
    auto label = labels.find(term.topology_key);
    if (label != labels.end() && s.anti_affinity.get(term.topology_key, label->second) > 0)
      return false;
  }
  return true;
}

}  // namespace

InterPodAffinity::InterPodAffinity(std::shared_ptr<const InterPodAffinityArgs> args,
                                   const FrameworkHandle& handle)
    : args_(args ? std::move(args) : std::make_shared<const InterPodAffinityArgs>()),
      handle_(&handle) {}

Status InterPodAffinity::preFilter(CycleState& state, const PodInfo& pod) {
  const Snapshot& snapshot = handle_->snapshot();
  const bool has_affinity = !pod.pod_affinity.required.empty();
  const bool has_anti_affinity = !pod.pod_anti_affinity.required.empty();
  // Nothing can fail the pod when it has no required terms of its own and no existing pod's
  // anti-affinity selects it: Filter would pass every node and RemovePod (preemption's
  // victims) would change nothing. Later upstream answers Skip then; we also wait for no pod to
  // be nominated anywhere, since 1.20 counts a nominated pod's anti-affinity through AddPod.
  const bool may_skip =
      !has_affinity && !has_anti_affinity && !handle_->cluster().anyNominatedPods();
  if (may_skip && snapshot.nodesWithRequiredAntiAffinity().empty())
    return Status::skip();
  auto s = std::make_unique<PreFilterState>();

  for (const auto& node : snapshot.nodesWithRequiredAntiAffinity()) {
    if (!node->node)
      continue;
    for (const auto& existing : node->pods_with_required_anti_affinity)
      countExistingAntiAffinity(s->existing_anti_affinity, pod, *existing, node->node->labels, 1);
  }

  if (may_skip && s->existing_anti_affinity.empty())
    return Status::skip();
  if (has_affinity || has_anti_affinity) {
    for (const auto& node : snapshot.nodes()) {
      if (!node->node)
        continue;
      const kube::Labels& labels = node->node->labels;
      for (const auto& existing : node->pods) {
        if (has_affinity)
          countIncomingAffinity(s->affinity, pod, *existing, labels, 1);
        if (has_anti_affinity)
          countIncomingAntiAffinity(s->anti_affinity, pod, *existing, labels, 1);
      }
    }
    s->pod_matches_own_affinity = podMatchesAllTerms(pod, pod.pod_affinity.required);
  }

  state.write(kPreFilterState, std::move(s));
  return Status::success();
}

Status InterPodAffinity::update(CycleState& state, const PodInfo& pod_to_schedule,
                                const PodInfo& pod, const NodeInfo& node,
                                std::int64_t delta) const {
  auto* s = state.readMutable<PreFilterState>(kPreFilterState);
  if (s == nullptr)
    return stateNotFound();
  if (!node.node)
    return Status::error("node not found");
  const kube::Labels& labels = node.node->labels;
  countExistingAntiAffinity(s->existing_anti_affinity, pod_to_schedule, pod, labels, delta);
  countIncomingAffinity(s->affinity, pod_to_schedule, pod, labels, delta);
  countIncomingAntiAffinity(s->anti_affinity, pod_to_schedule, pod, labels, delta);
  return Status::success();
}

Status InterPodAffinity::addPod(CycleState& state, const PodInfo& pod_to_schedule,
                                const PodInfo& pod_to_add, const NodeInfo& node) const {
  return update(state, pod_to_schedule, pod_to_add, node, 1);
}

Status InterPodAffinity::removePod(CycleState& state, const PodInfo& pod_to_schedule,
                                   const PodInfo& pod_to_remove, const NodeInfo& node) const {
  return update(state, pod_to_schedule, pod_to_remove, node, -1);
}

Status InterPodAffinity::filter(const CycleState& state, const PodInfo& pod,
                                const NodeInfo& node) const {
  if (!node.node)
    return Status::error("node not found");
  const auto* s = state.read<PreFilterState>(kPreFilterState);
  if (s == nullptr)
    return stateNotFound();
  const kube::Labels& labels = node.node->labels;

  // Each check is skipped outright when it cannot fail, so a pod without required terms in a
  // cluster without anti-affinity towards it costs three tests here.
  if (!pod.pod_affinity.required.empty() && !satisfiesPodAffinity(*s, pod, labels))
    return failure(Code::kUnschedulableAndUnresolvable, kErrReasonAffinityRulesNotMatch);
  if (!s->anti_affinity.empty() && !satisfiesPodAntiAffinity(*s, pod, labels))
    return failure(Code::kUnschedulable, kErrReasonAntiAffinityRulesNotMatch);
  if (!s->existing_anti_affinity.empty() && s->existing_anti_affinity.anyPositiveOn(labels))
    return failure(Code::kUnschedulable, kErrReasonExistingAntiAffinityRulesNotMatch);
  return Status::success();
}

}  // namespace koord::roles::scheduler::upstream::interpodaffinity
