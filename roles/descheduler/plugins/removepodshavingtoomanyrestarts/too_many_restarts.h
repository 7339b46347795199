// RemovePodsHavingTooManyRestarts: evicts pods whose containers restarted too often on their node
// (a bad volume, a node-specific setting), as the community descheduler's plugin of that name.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "framework/plugin.h"
#include "plugins/pluginkit/plugin_base.h"
#include "plugins/podfilter/pod_states.h"
#include "plugins/removepodshavingtoomanyrestarts/args.h"

namespace koord::roles::descheduler::toomanyrestarts {

inline constexpr std::string_view kTooManyRestartsName = "RemovePodsHavingTooManyRestarts";

/// The restarts of the pod's containers, its init containers' too when asked.
std::int32_t totalRestarts(const Pod& pod, bool including_init_containers);

using podfilter::inStates;

class RemovePodsHavingTooManyRestarts final
    : public pluginkit::FilteredPlugin<RemovePodsHavingTooManyRestartsArgs, DeschedulePlugin,
                                       kTooManyRestartsName> {
 public:
  using FilteredPlugin::FilteredPlugin;

  /// Node by node, in the order given: every pod over the threshold that the filters let go, until
  /// the node's cap (next node) or the total cap (done).
  Expected<void> deschedule(const std::vector<const Node*>& nodes) override;
};

}  // namespace koord::roles::descheduler::toomanyrestarts
