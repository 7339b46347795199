#include "plugins/upstream/podtopologyspread/register.h"

#include <memory>
#include <string>

#include "framework/plugin_factory.h"
#include "plugins/upstream/podtopologyspread/pod_topology_spread.h"

namespace koord::roles::scheduler::upstream {

void registerPodTopologySpread(PluginRegistry& registry) {
  registry.add(
      std::string(kPodTopologySpreadName),
      makePluginFactory<PodTopologySpread, PodTopologySpreadArgs>(
          decodePodTopologySpreadArgs, "PodTopologySpread: args are not PodTopologySpreadArgs"));
}

}  // namespace koord::roles::scheduler::upstream
