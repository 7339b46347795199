// NodeResourcesBalancedAllocation: favours nodes whose cpu and memory would be equally requested
// (1.20's formula); v1beta2+ args naming resources switch to the later std-deviation formula.
#pragma once

#include <boost/json/fwd.hpp>

#include <memory>
#include <string_view>
#include <vector>

#include "framework/plugin.h"
#include "koord/kube/error.h"
#include "plugins/upstream/noderesources/resource_allocation.h"

namespace koord::roles::scheduler::upstream {

inline constexpr std::string_view kNodeResourcesBalancedAllocationName =
    "NodeResourcesBalancedAllocation";

struct NodeResourcesBalancedAllocationArgs final : PluginArgs {
  /// Empty: 1.20's formula over cpu and memory.
  std::vector<ResourceSpec> resources;
};

/// v1beta1: no args. v1beta2+: {resources: [{name, weight}]}, every weight 1 (0 defaults to 1).
kube::Expected<std::shared_ptr<const NodeResourcesBalancedAllocationArgs>>
decodeNodeResourcesBalancedAllocationArgs(const boost::json::value* args,
                                          std::string_view api_version);

class NodeResourcesBalancedAllocation final : public ScorePlugin {
 public:
  explicit NodeResourcesBalancedAllocation(
      std::shared_ptr<const NodeResourcesBalancedAllocationArgs> args);

  std::string_view name() const override { return kNodeResourcesBalancedAllocationName; }
  Status score(const CycleState& state, const PodInfo& pod, const NodeInfo& node,
               std::int64_t& score) const override;

 private:
  std::shared_ptr<const NodeResourcesBalancedAllocationArgs> args_;
  std::vector<ResolvedResource> resources_;  // args_->resources, resolved once
};

}  // namespace koord::roles::scheduler::upstream
