// NodeResourcesMostAllocated, kube-scheduler 1.20's v1beta1 Score plugin: packs pods by favouring
// nodes whose configured resources are most requested (weighted average, cpu and memory default).
#pragma once

#include <boost/json/fwd.hpp>

#include <memory>
#include <string_view>
#include <vector>

#include "framework/plugin.h"
#include "koord/kube/error.h"
#include "plugins/upstream/noderesources/resource_allocation.h"

namespace koord::roles::scheduler::upstream {

inline constexpr std::string_view kNodeResourcesMostAllocatedName = "NodeResourcesMostAllocated";

struct NodeResourcesMostAllocatedArgs final : PluginArgs {
  std::vector<ResourceSpec> resources = defaultResourceSpecs();
};

/// {resources: [{name, weight}]}; weights in [1, 100]; cpu and memory weight 1 when empty.
kube::Expected<std::shared_ptr<const NodeResourcesMostAllocatedArgs>>
decodeNodeResourcesMostAllocatedArgs(const boost::json::value* args, std::string_view api_version);

class NodeResourcesMostAllocated final : public ScorePlugin {
 public:
  explicit NodeResourcesMostAllocated(std::shared_ptr<const NodeResourcesMostAllocatedArgs> args);

  std::string_view name() const override { return kNodeResourcesMostAllocatedName; }
  Status score(const CycleState& state, const PodInfo& pod, const NodeInfo& node,
               std::int64_t& score) const override;

 private:
  std::shared_ptr<const NodeResourcesMostAllocatedArgs> args_;
  std::vector<ResolvedResource> resources_;  // args_->resources, resolved once
};

}  // namespace koord::roles::scheduler::upstream
