// The NodeNUMAResource plugin's entry in the plugin registry: Koordinator's name, its args and
// the NodeResourceTopology informer it reads. The in-tree registry table calls it.
#pragma once

#include <string_view>

namespace koord::roles::scheduler {
class PluginRegistry;
}

namespace koord::roles::scheduler::nodenumaresource {

/// The ClusterView key of the NodeResourceTopology informer the registration declares.
inline constexpr std::string_view kNodeResourceTopologySource =
    "topology.node.k8s.io/v1alpha1/noderesourcetopologies";

void registerNodeNUMAResource(PluginRegistry& registry);

}  // namespace koord::roles::scheduler::nodenumaresource
