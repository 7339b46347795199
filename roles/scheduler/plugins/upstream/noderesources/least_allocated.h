// NodeResourcesLeastAllocated, kube-scheduler 1.20's v1beta1 Score plugin: favours nodes with
// the most free share of the configured resources (weighted average, cpu and memory by default).
#pragma once

#include <boost/json/fwd.hpp>

#include <memory>
#include <string_view>
#include <vector>

#include "framework/plugin.h"
#include "koord/kube/error.h"
#include "plugins/upstream/noderesources/resource_allocation.h"

namespace koord::roles::scheduler::upstream {

inline constexpr std::string_view kNodeResourcesLeastAllocatedName = "NodeResourcesLeastAllocated";

struct NodeResourcesLeastAllocatedArgs final : PluginArgs {
  std::vector<ResourceSpec> resources = defaultResourceSpecs();
};

/// {resources: [{name, weight}]}; weights in [1, 100]; cpu and memory weight 1 when empty.
kube::Expected<std::shared_ptr<const NodeResourcesLeastAllocatedArgs>>
decodeNodeResourcesLeastAllocatedArgs(const boost::json::value* args, std::string_view api_version);

class NodeResourcesLeastAllocated final : public ScorePlugin {
 public:
  explicit NodeResourcesLeastAllocated(std::shared_ptr<const NodeResourcesLeastAllocatedArgs> args);

  std::string_view name() const override { return kNodeResourcesLeastAllocatedName; }
  Status score(const CycleState& state, const PodInfo& pod, const NodeInfo& node,
               std::int64_t& score) const override;

 private:
  std::shared_ptr<const NodeResourcesLeastAllocatedArgs> args_;
  std::vector<ResolvedResource> resources_;  // args_->resources, resolved once
};

}  // namespace koord::roles::scheduler::upstream
