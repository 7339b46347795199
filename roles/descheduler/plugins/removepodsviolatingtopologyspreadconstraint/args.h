// RemovePodsViolatingTopologySpreadConstraintArgs as the community descheduler spells them (the
// release Koordinator embeds and the later constraints/topologyBalanceNodeFit members), read
// strictly from pluginConfig.
#pragma once

#include <boost/json/fwd.hpp>

#include <vector>

#include "framework/plugin.h"
#include "framework/types.h"
#include "koord/core/expected.h"
#include "plugins/podfilter/pod_filter.h"

namespace koord::roles::descheduler::topologyspread {

struct RemovePodsViolatingTopologySpreadConstraintArgs final : PluginArgs {
  podfilter::CommonArgs common;
  /// Which whenUnsatisfiable kinds of constraint are balanced: DoNotSchedule unless the args
  /// name others; includeSoftConstraints adds ScheduleAnyway.
  std::vector<UnsatisfiableConstraintAction> constraints = {
      UnsatisfiableConstraintAction::kDoNotSchedule};
  /// Only pods some node of a below-average domain would take are evicted.
  bool topology_balance_node_fit = true;

  bool allows(UnsatisfiableConstraintAction action) const;
};

/// Decodes pluginConfig args (null or absent: the defaults). Unknown members, wrong JSON types,
/// an unknown constraint, both namespace lists, a selector that does not compile are errors
/// naming the field.
Expected<RemovePodsViolatingTopologySpreadConstraintArgs>
decodeRemovePodsViolatingTopologySpreadConstraintArgs(const boost::json::value* args);

}  // namespace koord::roles::descheduler::topologyspread
