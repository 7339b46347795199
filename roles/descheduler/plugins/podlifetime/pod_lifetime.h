// PodLifeTime: evicts pods that have lived longer than maxPodLifeTimeSeconds, oldest first, as the
// community descheduler's plugin of that name.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "framework/plugin.h"
#include "plugins/pluginkit/plugin_base.h"
#include "plugins/podfilter/pod_states.h"
#include "plugins/podlifetime/args.h"

namespace koord::roles::descheduler::podlifetime {

inline constexpr std::string_view kPodLifeTimeName = "PodLifeTime";

/// Whole seconds from the pod's creation to `now` (0 when created "after" now); none without a
/// creationTimestamp.
std::optional<std::uint64_t> ageSeconds(const Pod& pod, TimePoint now);

using podfilter::inStates;

class PodLifeTime final
    : public pluginkit::FilteredPlugin<PodLifeTimeArgs, DeschedulePlugin, kPodLifeTimeName> {
 public:
  using FilteredPlugin::FilteredPlugin;

  /// The pods of every given node older than the limit, oldest first across nodes (so caps and
  /// budgets spend themselves on the oldest), skipping nodes at their cap, until the total cap.
  Expected<void> deschedule(const std::vector<const Node*>& nodes) override;
};

}  // namespace koord::roles::descheduler::podlifetime
