// RemovePodsViolatingNodeTaints' registry entry: its args decoder and its factory.
#include "plugins/removepodsviolatingnodetaints/register.h"

#include <memory>
#include <string>

#include "plugins/removepodsviolatingnodetaints/args.h"
#include "plugins/removepodsviolatingnodetaints/node_taints.h"

namespace koord::roles::descheduler {

void registerRemovePodsViolatingNodeTaints(PluginRegistry& r) {
  using nodetaints::RemovePodsViolatingNodeTaintsArgs;
  r.add(std::string(nodetaints::kRemovePodsViolatingNodeTaintsName),
        makePluginFactory<RemovePodsViolatingNodeTaintsArgs>(
            [](const boost::json::value* args) {
              return nodetaints::decodeRemovePodsViolatingNodeTaintsArgs(args);
            },
            [](std::shared_ptr<const RemovePodsViolatingNodeTaintsArgs> args,
               FrameworkHandle& handle) {
              if (!args)
                args = std::make_shared<const RemovePodsViolatingNodeTaintsArgs>();
              return nodetaints::makeRemovePodsViolatingNodeTaints(std::move(args), handle);
            },
            "RemovePodsViolatingNodeTaints: args are not RemovePodsViolatingNodeTaintsArgs"));
}

}  // namespace koord::roles::descheduler
