#include "plugins/upstream/nodeports/register.h"

#include <string>

#include "framework/plugin_factory.h"
#include "plugins/upstream/nodeports/node_ports.h"

namespace koord::roles::scheduler::upstream {

void registerNodePorts(PluginRegistry& registry) {
  registry.add(std::string(kNodePortsName), makePluginFactory<NodePorts>(kNodePortsName));
}

}  // namespace koord::roles::scheduler::upstream
