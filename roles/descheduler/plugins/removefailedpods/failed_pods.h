// RemoveFailedPods: evicts Failed pods (matching the reasons asked for, old enough, not owned by an
// excluded kind) so their controllers recreate them, as the community descheduler's plugin.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "framework/plugin.h"
#include "plugins/pluginkit/plugin_base.h"
#include "plugins/removefailedpods/args.h"

namespace koord::roles::descheduler::failedpods {

inline constexpr std::string_view kRemoveFailedPodsName = "RemoveFailedPods";

/// Why `pod`, Failed, is not to be evicted under `args` at `now` (age, owner kind, reasons), every
/// rule broken; empty when it is. Namespaces and labelSelector are not looked at here.
std::vector<std::string> failedPodRefusals(const Pod& pod, const RemoveFailedPodsArgs& args,
                                           TimePoint now);

class RemoveFailedPods final
    : public pluginkit::FilteredPlugin<RemoveFailedPodsArgs, DeschedulePlugin,
                                       kRemoveFailedPodsName> {
 public:
  using FilteredPlugin::FilteredPlugin;

  /// Node by node, in the order given: every Failed pod the rules and filters let go, until the
  /// node's cap (next node) or the total cap (done).
  Expected<void> deschedule(const std::vector<const Node*>& nodes) override;
};

}  // namespace koord::roles::descheduler::failedpods
