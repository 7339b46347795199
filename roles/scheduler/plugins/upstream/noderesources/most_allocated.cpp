#include "plugins/upstream/noderesources/most_allocated.h"

#include "framework/plugin_registry.h"
#include "plugins/upstream/noderesources/resource_args.h"
#include "plugins/upstream/upstream_plugins.h"

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

void registerNodeResourcesMostAllocated(PluginRegistry& registry) {
  registry.add(
      std::string(kNodeResourcesMostAllocatedName),
      PluginFactory{
          .decode_args = [](const boost::json::value* args, std::string_view api_version)
              -> kube::Expected<std::shared_ptr<const PluginArgs>> {
            auto decoded = decodeNodeResourcesMostAllocatedArgs(args, api_version);
            if (!decoded)
              return decoded.error();
            return std::shared_ptr<const PluginArgs>(std::move(*decoded));
          },
          .create = [](std::shared_ptr<const PluginArgs> args,
                       FrameworkHandle&) -> kube::Expected<std::shared_ptr<Plugin>> {
            auto typed = std::dynamic_pointer_cast<const NodeResourcesMostAllocatedArgs>(args);
            if (args && !typed)
              return kube::makeKubeError(
                  "NodeResourcesMostAllocated: args are not NodeResourcesMostAllocatedArgs");
            return std::make_shared<NodeResourcesMostAllocated>(std::move(typed));
          },
      });
}

}  // namespace koord::roles::scheduler::upstream
