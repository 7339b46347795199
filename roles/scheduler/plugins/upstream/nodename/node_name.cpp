#include "plugins/upstream/nodename/node_name.h"

#include "plugins/upstream/args_decode.h"

namespace koord::roles::scheduler::upstream {

Status NodeName::filter(const CycleState&, const PodInfo& pod, const NodeInfo& node) const {
  if (!node.node)
    return Status::error("node not found");
  if (pod.node_name.empty() || pod.node_name == node.node->name)
    return Status::success();
  return Status::unresolvable(std::string(kErrReasonNodeName));
}

}  // namespace koord::roles::scheduler::upstream
