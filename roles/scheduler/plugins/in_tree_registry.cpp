// Every plugin this build carries, by name: upstream's and Koordinator's.
#include "framework/plugin_registry.h"
#include "plugins/loadaware/loadaware.h"
#include "plugins/upstream/defaultpreemption/default_preemption.h"
#include "plugins/upstream/interpodaffinity/inter_pod_affinity.h"
#include "plugins/upstream/podtopologyspread/pod_topology_spread.h"
#include "plugins/upstream/upstream_plugins.h"

namespace koord::roles::scheduler {

const PluginRegistry& inTreeRegistry() {
  static const PluginRegistry registry = [] {
    PluginRegistry r;
    upstream::registerUpstreamPlugins(r);
    upstream::registerInterPodAffinity(r);
    upstream::registerPodTopologySpread(r);
    upstream::registerDefaultPreemption(r);
    registerLoadAwareScheduling(r);
    return r;
  }();
  return registry;
}

}  // namespace koord::roles::scheduler
