// RemoveFailedPods's registry entry: its args decoder and its factory.
#include "plugins/removefailedpods/register.h"

#include "plugins/pluginkit/add_plugin.h"
#include "plugins/removefailedpods/args.h"
#include "plugins/removefailedpods/failed_pods.h"

namespace koord::roles::descheduler {

void registerRemoveFailedPods(PluginRegistry& r) {
  using namespace failedpods;
  pluginkit::addPlugin<RemoveFailedPodsArgs>(
      r, kRemoveFailedPodsName, decodeRemoveFailedPodsArgs,
      pluginkit::makeFiltered<RemoveFailedPods, RemoveFailedPodsArgs>);
}

}  // namespace koord::roles::descheduler
