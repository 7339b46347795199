#include "plugins/upstream/defaultpreemption/eligibility.h"

namespace koord::roles::scheduler::upstream {

namespace {

bool unresolvable(const NodeStatusMap& filtered, const std::string& node) {
  auto it = filtered.find(node);
  return it != filtered.end() && it->second.code() == Code::kUnschedulableAndUnresolvable;
}

}  // namespace

std::optional<std::string_view> notEligibleToPreempt(const PodInfo& pod, const Snapshot& snapshot,
                                                     const NodeStatusMap& filtered) {
  if (pod.preempt_never)
    return kNotEligiblePreemptNever;
  if (pod.nominated_node_name.empty() || unresolvable(filtered, pod.nominated_node_name))
    return std::nullopt;
  if (const NodeInfo* node = snapshot.get(pod.nominated_node_name)) {
    for (const auto& p : node->pods) {
      if (p->terminating && p->priority < pod.priority)
        return kNotEligibleTerminating;
    }
  }
  return std::nullopt;
}

std::vector<const NodeInfo*> nodesWherePreemptionMightHelp(const Snapshot& snapshot,
                                                           const NodeStatusMap& filtered) {
  std::vector<const NodeInfo*> out;
  out.reserve(snapshot.size());
  for (const auto& n : snapshot.nodes()) {
    if (!unresolvable(filtered, n->name()))
      out.push_back(n.get());
  }
  return out;
}

}  // namespace koord::roles::scheduler::upstream
