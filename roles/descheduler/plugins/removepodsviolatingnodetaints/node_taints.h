// RemovePodsViolatingNodeTaints (the community descheduler's Deschedule plugin): evicts pods that
// do not tolerate a NoSchedule taint of their node (PreferNoSchedule too when asked), within the
// taints the args include and do not exclude.
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "framework/plugin.h"
#include "koord/core/expected.h"
#include "koord/kube/scheduling_match.h"
#include "plugins/pluginkit/plugin_base.h"
#include "plugins/podfilter/pod_filter.h"
#include "plugins/removepodsviolatingnodetaints/args.h"

namespace koord::roles::descheduler::nodetaints {

inline constexpr std::string_view kRemovePodsViolatingNodeTaintsName =
    "RemovePodsViolatingNodeTaints";

/// Whether `taint` is one the args make the plugin enforce (its effect, included and not
/// excluded, each list naming "key" or "key=value").
bool taintCounts(const RemovePodsViolatingNodeTaintsArgs& args, const kube::Taint& taint);

class RemovePodsViolatingNodeTaints final
    : public pluginkit::FilteredPlugin<RemovePodsViolatingNodeTaintsArgs, DeschedulePlugin,
                                       kRemovePodsViolatingNodeTaintsName> {
 public:
  using FilteredPlugin::FilteredPlugin;

  Expected<void> deschedule(const std::vector<const Node*>& nodes) override;
};

/// The plugin on `handle`; errors when the args' selector does not compile.
Expected<std::shared_ptr<Plugin>> makeRemovePodsViolatingNodeTaints(
    std::shared_ptr<const RemovePodsViolatingNodeTaintsArgs> args, FrameworkHandle& handle);

}  // namespace koord::roles::descheduler::nodetaints
