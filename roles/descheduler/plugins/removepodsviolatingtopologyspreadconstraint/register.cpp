// RemovePodsViolatingTopologySpreadConstraint's registry entry: its args decoder and factory.
#include "plugins/removepodsviolatingtopologyspreadconstraint/register.h"

#include <memory>
#include <string>

#include "plugins/removepodsviolatingtopologyspreadconstraint/args.h"
#include "plugins/removepodsviolatingtopologyspreadconstraint/topology_spread.h"

namespace koord::roles::descheduler {

void registerRemovePodsViolatingTopologySpreadConstraint(PluginRegistry& r) {
  using topologyspread::RemovePodsViolatingTopologySpreadConstraintArgs;
  r.add(std::string(topologyspread::kRemovePodsViolatingTopologySpreadConstraintName),
        makePluginFactory<RemovePodsViolatingTopologySpreadConstraintArgs>(
            [](const boost::json::value* args) {
              return topologyspread::decodeRemovePodsViolatingTopologySpreadConstraintArgs(args);
            },
            [](std::shared_ptr<const RemovePodsViolatingTopologySpreadConstraintArgs> args,
               FrameworkHandle& handle) {
              if (!args)
                args = std::make_shared<const RemovePodsViolatingTopologySpreadConstraintArgs>();
              return topologyspread::makeRemovePodsViolatingTopologySpreadConstraint(
                  std::move(args), handle);
            },
            "RemovePodsViolatingTopologySpreadConstraint: args are not "
            "RemovePodsViolatingTopologySpreadConstraintArgs"));
}

}  // namespace koord::roles::descheduler
