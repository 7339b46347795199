#include "plugins/upstream/noderesources/least_allocated.h"

#include "framework/plugin_registry.h"
#include "plugins/upstream/noderesources/resource_args.h"
#include "plugins/upstream/upstream_plugins.h"

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

void registerNodeResourcesLeastAllocated(PluginRegistry& registry) {
  registry.add(
      std::string(kNodeResourcesLeastAllocatedName),
      PluginFactory{
          .decode_args = [](const boost::json::value* args, std::string_view api_version)
              -> kube::Expected<std::shared_ptr<const PluginArgs>> {
            auto decoded = decodeNodeResourcesLeastAllocatedArgs(args, api_version);
            if (!decoded)
              return decoded.error();
            return std::shared_ptr<const PluginArgs>(std::move(*decoded));
          },
          .create = [](std::shared_ptr<const PluginArgs> args,
                       FrameworkHandle&) -> kube::Expected<std::shared_ptr<Plugin>> {
            auto typed = std::dynamic_pointer_cast<const NodeResourcesLeastAllocatedArgs>(args);
            if (args && !typed)
              return kube::makeKubeError(
                  "NodeResourcesLeastAllocated: args are not NodeResourcesLeastAllocatedArgs");
            return std::make_shared<NodeResourcesLeastAllocated>(std::move(typed));
          },
      });
}

}  // namespace koord::roles::scheduler::upstream
