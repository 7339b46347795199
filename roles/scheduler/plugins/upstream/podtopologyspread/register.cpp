#include "plugins/upstream/podtopologyspread/register.h"

#include <memory>
#include <string>
#include <utility>

#include "framework/plugin_factory.h"
#include "plugins/upstream/helper/spread_informers.h"
#include "plugins/upstream/podtopologyspread/pod_topology_spread.h"

namespace koord::roles::scheduler::upstream {

void registerPodTopologySpread(PluginRegistry& registry) {
  PluginFactory factory = makePluginFactory<PodTopologySpread, PodTopologySpreadArgs>(
      decodePodTopologySpreadArgs, "PodTopologySpread: args are not PodTopologySpreadArgs");
  // Default constraints select by the pod's Services, RCs, ReplicaSets and StatefulSets.
  helper::declareSpreadSelectorInformers(factory);
  registry.add(std::string(kPodTopologySpreadName), std::move(factory));
}

}  // namespace koord::roles::scheduler::upstream
