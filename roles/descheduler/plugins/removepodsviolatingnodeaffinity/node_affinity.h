// RemovePodsViolatingNodeAffinity (the community descheduler's Deschedule plugin): evicts a pod
// whose node no longer satisfies its required node affinity, or that another node would suit
// better by its preferred node affinity, when some other node would take it.
#pragma once

#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "framework/plugin.h"
#include "koord/core/expected.h"
#include "plugins/pluginkit/plugin_base.h"
#include "plugins/podfilter/pod_filter.h"
#include "plugins/removepodsviolatingnodeaffinity/args.h"

namespace koord::roles::descheduler::nodeaffinity {

inline constexpr std::string_view kRemovePodsViolatingNodeAffinityName =
    "RemovePodsViolatingNodeAffinity";

class RemovePodsViolatingNodeAffinity final
    : public pluginkit::FilteredPlugin<RemovePodsViolatingNodeAffinityArgs, DeschedulePlugin,
                                       kRemovePodsViolatingNodeAffinityName> {
 public:
  using FilteredPlugin::FilteredPlugin;

  Expected<void> deschedule(const std::vector<const Node*>& nodes) override;

 private:
  /// Whether `pod` on `node` breaks the rule of `type` and another of `nodes` would take it.
  bool violates(NodeAffinityType type, const Pod& pod, const Node& node,
                const std::vector<const Node*>& nodes) const;
};

/// The plugin on `handle`; errors when the args' selector does not compile.
Expected<std::shared_ptr<Plugin>> makeRemovePodsViolatingNodeAffinity(
    std::shared_ptr<const RemovePodsViolatingNodeAffinityArgs> args, FrameworkHandle& handle);

}  // namespace koord::roles::descheduler::nodeaffinity
