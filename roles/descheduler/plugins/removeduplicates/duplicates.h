// RemoveDuplicates (the community descheduler's Balance plugin): pods of one owner running the
// same images on one node are duplicates; the extras above the owner's even share of the nodes
// its pods could run on are evicted.
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "framework/plugin.h"
#include "koord/core/expected.h"
#include "plugins/pluginkit/plugin_base.h"
#include "plugins/podfilter/pod_filter.h"
#include "plugins/removeduplicates/args.h"

namespace koord::roles::descheduler::removeduplicates {

inline constexpr std::string_view kRemoveDuplicatesName = "RemoveDuplicates";

/// How many of `nodes` the pods could land on: the union, over the pods that differ in
/// tolerations, nodeSelector or required node affinity, of the nodes each matches and
/// tolerates, counting only a pod that has more than one such node.
std::size_t feasibleNodeCount(const std::vector<const Pod*>& pods,
                              const std::vector<const Node*>& nodes);

class RemoveDuplicates final
    : public pluginkit::FilteredPlugin<RemoveDuplicatesArgs, BalancePlugin, kRemoveDuplicatesName> {
 public:
  using FilteredPlugin::FilteredPlugin;

  Expected<void> balance(const std::vector<const Node*>& nodes) override;
};

Expected<std::shared_ptr<Plugin>> makeRemoveDuplicates(
    std::shared_ptr<const RemoveDuplicatesArgs> args, FrameworkHandle& handle);

}  // namespace koord::roles::descheduler::removeduplicates
