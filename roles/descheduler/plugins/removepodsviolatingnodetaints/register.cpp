// RemovePodsViolatingNodeTaints' registry entry: its args decoder and its factory.
#include "plugins/removepodsviolatingnodetaints/register.h"

#include "plugins/pluginkit/add_plugin.h"
#include "plugins/removepodsviolatingnodetaints/args.h"
#include "plugins/removepodsviolatingnodetaints/node_taints.h"

namespace koord::roles::descheduler {

void registerRemovePodsViolatingNodeTaints(PluginRegistry& r) {
  using namespace nodetaints;
  pluginkit::addPlugin<RemovePodsViolatingNodeTaintsArgs>(r, kRemovePodsViolatingNodeTaintsName,
                                                          decodeRemovePodsViolatingNodeTaintsArgs,
                                                          makeRemovePodsViolatingNodeTaints);
}

}  // namespace koord::roles::descheduler
