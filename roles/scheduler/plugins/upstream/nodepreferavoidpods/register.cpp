#include "plugins/upstream/nodepreferavoidpods/register.h"

#include <string>

#include "framework/plugin_factory.h"
#include "plugins/upstream/nodepreferavoidpods/node_prefer_avoid_pods.h"

namespace koord::roles::scheduler::upstream {

void registerNodePreferAvoidPods(PluginRegistry& registry) {
  registry.add(std::string(kNodePreferAvoidPodsName),
               makePluginFactory<NodePreferAvoidPods>(kNodePreferAvoidPodsName));
}

}  // namespace koord::roles::scheduler::upstream
