// RemovePodsViolatingNodeAffinity's registry entry: its args decoder and its factory.
#include "plugins/removepodsviolatingnodeaffinity/register.h"

#include <memory>
#include <string>

#include "plugins/removepodsviolatingnodeaffinity/args.h"
#include "plugins/removepodsviolatingnodeaffinity/node_affinity.h"

namespace koord::roles::descheduler {

void registerRemovePodsViolatingNodeAffinity(PluginRegistry& r) {
  using nodeaffinity::RemovePodsViolatingNodeAffinityArgs;
  r.add(std::string(nodeaffinity::kRemovePodsViolatingNodeAffinityName),
        makePluginFactory<RemovePodsViolatingNodeAffinityArgs>(
            [](const boost::json::value* args) {
              return nodeaffinity::decodeRemovePodsViolatingNodeAffinityArgs(args);
            },
            [](std::shared_ptr<const RemovePodsViolatingNodeAffinityArgs> args,
               FrameworkHandle& handle) -> Expected<std::shared_ptr<Plugin>> {
              if (!args)
                return invalidArgument(
                    "RemovePodsViolatingNodeAffinity: nodeAffinityType needs "
                    "to be set");
              return nodeaffinity::makeRemovePodsViolatingNodeAffinity(std::move(args), handle);
            },
            "RemovePodsViolatingNodeAffinity: args are not RemovePodsViolatingNodeAffinityArgs"));
}

}  // namespace koord::roles::descheduler
