// RemovePodsViolatingTopologySpreadConstraint's registry entry: its args decoder and factory.
#include "plugins/removepodsviolatingtopologyspreadconstraint/register.h"

#include "plugins/pluginkit/add_plugin.h"
#include "plugins/removepodsviolatingtopologyspreadconstraint/args.h"
#include "plugins/removepodsviolatingtopologyspreadconstraint/topology_spread.h"

namespace koord::roles::descheduler {

void registerRemovePodsViolatingTopologySpreadConstraint(PluginRegistry& r) {
  using namespace topologyspread;
  pluginkit::addPlugin<RemovePodsViolatingTopologySpreadConstraintArgs>(
      r, kRemovePodsViolatingTopologySpreadConstraintName,
      decodeRemovePodsViolatingTopologySpreadConstraintArgs,
      makeRemovePodsViolatingTopologySpreadConstraint);
}

}  // namespace koord::roles::descheduler
