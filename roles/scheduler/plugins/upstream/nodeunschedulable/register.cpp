#include "plugins/upstream/nodeunschedulable/register.h"

#include <string>

#include "framework/plugin_factory.h"
#include "plugins/upstream/nodeunschedulable/node_unschedulable.h"

namespace koord::roles::scheduler::upstream {

void registerNodeUnschedulable(PluginRegistry& registry) {
  registry.add(std::string(kNodeUnschedulableName),
               makePluginFactory<NodeUnschedulable>(kNodeUnschedulableName));
}

}  // namespace koord::roles::scheduler::upstream
