#include "plugins/upstream/nodename/node_name.h"

#include "framework/plugin_registry.h"
#include "plugins/upstream/args_decode.h"
#include "plugins/upstream/upstream_plugins.h"

namespace koord::roles::scheduler::upstream {

Status NodeName::filter(const CycleState&, const PodInfo& pod, const NodeInfo& node) const {
  if (!node.node)
    return Status::error("node not found");
  if (pod.node_name.empty() || pod.node_name == node.node->name)
    return Status::success();
  return Status::unresolvable(std::string(kErrReasonNodeName));
}

void registerNodeName(PluginRegistry& registry) {
  registry.add(std::string(kNodeNameName),
               PluginFactory{
                   .decode_args = [](const boost::json::value* args,
                                     std::string_view) { return refuseArgs(args, kNodeNameName); },
                   .create = [](std::shared_ptr<const PluginArgs>,
                                FrameworkHandle&) -> kube::Expected<std::shared_ptr<Plugin>> {
                     return std::make_shared<NodeName>();
                   },
               });
}

}  // namespace koord::roles::scheduler::upstream
