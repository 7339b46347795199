#include "plugins/upstream/noderesources/most_allocated.h"

#include "plugins/upstream/noderesources/resource_args.h"

namespace koord::roles::scheduler::upstream {

kube::Expected<std::shared_ptr<const NodeResourcesMostAllocatedArgs>>
decodeNodeResourcesMostAllocatedArgs(const boost::json::value* args, std::string_view) {
  auto resources = decodeV1beta1ResourcesArgs(args);
  if (!resources)
    return resources.error();
  auto out = std::make_shared<NodeResourcesMostAllocatedArgs>();
  out->resources = std::move(*resources);
  return std::shared_ptr<const NodeResourcesMostAllocatedArgs>(std::move(out));
}

NodeResourcesMostAllocated::NodeResourcesMostAllocated(
    std::shared_ptr<const NodeResourcesMostAllocatedArgs> args)
    : args_(args ? std::move(args) : std::make_shared<const NodeResourcesMostAllocatedArgs>()),
      resources_(resolveResources(args_->resources)) {}

Status NodeResourcesMostAllocated::score(const CycleState&, const PodInfo& pod,
                                         const NodeInfo& node, std::int64_t& score) const {
  if (!node.node)
    return Status::error("node not found");
  score = mostAllocatedScore(node, pod, resources_, ScorerRules::kV1_20);
  return Status::success();
}

}  // namespace koord::roles::scheduler::upstream
