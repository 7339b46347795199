#include "plugins/upstream/nodename/register.h"

#include <string>

#include "framework/plugin_factory.h"
#include "plugins/upstream/nodename/node_name.h"

namespace koord::roles::scheduler::upstream {

void registerNodeName(PluginRegistry& registry) {
  registry.add(std::string(kNodeNameName), makePluginFactory<NodeName>(kNodeNameName));
}

}  // namespace koord::roles::scheduler::upstream
