#include "plugins/upstream/nodeunschedulable/node_unschedulable.h"

#include "framework/plugin_registry.h"
#include "plugins/upstream/args_decode.h"
#include "plugins/upstream/upstream_plugins.h"

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

void registerNodeUnschedulable(PluginRegistry& registry) {
  registry.add(
      std::string(kNodeUnschedulableName),
      PluginFactory{
          .decode_args = [](const boost::json::value* args,
                            std::string_view) { return refuseArgs(args, kNodeUnschedulableName); },
          .create = [](std::shared_ptr<const PluginArgs>,
                       FrameworkHandle&) -> kube::Expected<std::shared_ptr<Plugin>> {
            return std::make_shared<NodeUnschedulable>();
          },
      });
}

}  // namespace koord::roles::scheduler::upstream
