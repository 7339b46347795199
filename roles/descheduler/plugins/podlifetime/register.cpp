// PodLifeTime's registry entry: its args decoder and its factory.
#include "plugins/podlifetime/register.h"

#include "plugins/pluginkit/add_plugin.h"
#include "plugins/podlifetime/args.h"
#include "plugins/podlifetime/pod_lifetime.h"

namespace koord::roles::descheduler {

void registerPodLifeTime(PluginRegistry& r) {
  using namespace podlifetime;
  pluginkit::addPlugin<PodLifeTimeArgs>(r, kPodLifeTimeName, decodePodLifeTimeArgs,
                                        pluginkit::makeFiltered<PodLifeTime, PodLifeTimeArgs>);
}

}  // namespace koord::roles::descheduler
