#include "plugins/nodenumaresource/register.h"

#include <fmt/format.h>

#include "framework/declared_informer.h"
#include "framework/plugin_factory.h"
#include "koord/apis/node_resource_topology.h"
#include "plugins/nodenumaresource/args.h"
#include "plugins/nodenumaresource/node_numa_resource.h"

namespace koord::roles::scheduler::nodenumaresource {

void registerNodeNUMAResource(PluginRegistry& registry) {
  PluginFactory factory = makePluginFactory<NodeNUMAResource, NodeNUMAResourceArgs>(
      decodeNodeNUMAResourceArgs, fmt::format("{}: want args of type {}", kPluginName, kArgsKind));
  // Found by discovery: without the CRD no node reports a topology, so no pod is bound to CPUs
  // or aligned to NUMA nodes (those that must be are refused).
  factory.objects.push_back(declareInformer<apis::NodeResourceTopology>({
      .key = std::string(kNodeResourceTopologySource),
      .resource = {std::string(apis::kTopologyGroup), std::string(apis::kTopologyVersion),
                   std::string(apis::kNodeResourceTopologyResource), "", "", ""},
      .project = apis::decodeNodeResourceTopology,
      .versions = {std::string(apis::kTopologyVersion)},
  }));
  registry.add(std::string(kPluginName), std::move(factory));
}

}  // namespace koord::roles::scheduler::nodenumaresource
