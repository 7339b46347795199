#include "plugins/upstream/nodeunschedulable/node_unschedulable.h"

#include "plugins/upstream/args_decode.h"

namespace koord::roles::scheduler::upstream {

Status NodeUnschedulable::filter(const CycleState&, const PodInfo& pod,
                                 const NodeInfo& node) const {
  if (!node.node)
    return Status::unresolvable(std::string(kErrReasonUnknownCondition));
  if (!node.node->unschedulable)
    return Status::success();
  // Tolerating the taint the node controller puts on cordoned nodes also tolerates the flag.
  const kube::Taint unschedulable{.key = std::string(kTaintNodeUnschedulable),
                                  .value = "",
                                  .effect = kube::TaintEffect::kNoSchedule};
  if (kube::tolerationsTolerateTaint(pod.tolerations, unschedulable))
    return Status::success();
  return Status::unresolvable(std::string(kErrReasonUnschedulable));
}

}  // namespace koord::roles::scheduler::upstream
