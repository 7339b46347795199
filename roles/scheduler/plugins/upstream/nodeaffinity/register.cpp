#include "plugins/upstream/nodeaffinity/register.h"

#include <memory>
#include <string>

#include "framework/plugin_factory.h"
#include "plugins/upstream/nodeaffinity/node_affinity.h"

namespace koord::roles::scheduler::upstream {

void registerNodeAffinity(PluginRegistry& registry) {
  registry.add(std::string(kNodeAffinityName),
               makePluginFactory<NodeAffinity, NodeAffinityArgs>(
                   decodeNodeAffinityArgs, "NodeAffinity: args are not NodeAffinityArgs"));
}

}  // namespace koord::roles::scheduler::upstream
