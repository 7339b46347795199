#include "plugins/upstream/noderesources/least_allocated.h"

#include "plugins/upstream/noderesources/resource_args.h"

namespace koord::roles::scheduler::upstream {

kube::Expected<std::shared_ptr<const NodeResourcesLeastAllocatedArgs>>
decodeNodeResourcesLeastAllocatedArgs(const boost::json::value* args, std::string_view) {
  auto resources = decodeV1beta1ResourcesArgs(args);
  if (!resources)
    return resources.error();
  auto out = std::make_shared<NodeResourcesLeastAllocatedArgs>();
  out->resources = std::move(*resources);
  return std::shared_ptr<const NodeResourcesLeastAllocatedArgs>(std::move(out));
}

NodeResourcesLeastAllocated::NodeResourcesLeastAllocated(
    std::shared_ptr<const NodeResourcesLeastAllocatedArgs> args)
    : args_(args ? std::move(args) : std::make_shared<const NodeResourcesLeastAllocatedArgs>()),
      resources_(resolveResources(args_->resources)) {}

Status NodeResourcesLeastAllocated::score(const CycleState&, const PodInfo& pod,
                                          const NodeInfo& node, std::int64_t& score) const {
  if (!node.node)
    return Status::error("node not found");
  score = leastAllocatedScore(node, pod, resources_, ScorerRules::kV1_20);
  return Status::success();
}

}  // namespace koord::roles::scheduler::upstream
