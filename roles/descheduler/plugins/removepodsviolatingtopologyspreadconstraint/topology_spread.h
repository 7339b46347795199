// RemovePodsViolatingTopologySpreadConstraint (the community descheduler's Balance plugin): for
// each namespace's distinct topology spread constraints, evicts pods from the largest domains
// until every two domains are within maxSkew.
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "framework/plugin.h"
#include "koord/core/expected.h"
#include "plugins/pluginkit/plugin_base.h"
#include "plugins/podfilter/pod_filter.h"
#include "plugins/removepodsviolatingtopologyspreadconstraint/args.h"

namespace koord::roles::descheduler::topologyspread {

inline constexpr std::string_view kRemovePodsViolatingTopologySpreadConstraintName =
    "RemovePodsViolatingTopologySpreadConstraint";

class RemovePodsViolatingTopologySpreadConstraint final
    : public pluginkit::FilteredPlugin<RemovePodsViolatingTopologySpreadConstraintArgs,
                                       BalancePlugin,
                                       kRemovePodsViolatingTopologySpreadConstraintName> {
 public:
  using FilteredPlugin::FilteredPlugin;

  Expected<void> balance(const std::vector<const Node*>& nodes) override;
};

/// The plugin on `handle`; errors when the args' selector does not compile.
Expected<std::shared_ptr<Plugin>> makeRemovePodsViolatingTopologySpreadConstraint(
    std::shared_ptr<const RemovePodsViolatingTopologySpreadConstraintArgs> args,
    FrameworkHandle& handle);

}  // namespace koord::roles::descheduler::topologyspread
