#include "plugins/upstream/noderesources/balanced_allocation.h"

#include <boost/json.hpp>

#include <fmt/format.h>

#include "koord/kube/json_fields.h"
#include "plugins/upstream/args_decode.h"
#include "plugins/upstream/noderesources/resource_args.h"

namespace koord::roles::scheduler::upstream {

kube::Expected<std::shared_ptr<const NodeResourcesBalancedAllocationArgs>>
decodeNodeResourcesBalancedAllocationArgs(const boost::json::value* args,
                                          std::string_view api_version) {
  auto out = std::make_shared<NodeResourcesBalancedAllocationArgs>();
  if (isV1beta1OrOlder(api_version)) {
    auto refused = refuseArgs(args, kNodeResourcesBalancedAllocationName);
    if (!refused)
      return refused.error();
    return std::shared_ptr<const NodeResourcesBalancedAllocationArgs>(std::move(out));
  }
  auto o = argsObject(args);
  if (!o)
    return o.error();
  if (*o == nullptr)
    return std::shared_ptr<const NodeResourcesBalancedAllocationArgs>(std::move(out));
  if (auto known = checkKnownFields(**o, {"resources"}, ""); !known)
    return known.error();
  if (const boost::json::value* r = kube::jsonfields::field(**o, "resources")) {
    auto resources = decodeResourceSpecs(*r, "resources");
    if (!resources)
      return resources.error();
    for (std::size_t i = 0; i < resources->size(); ++i) {
      auto& spec = (*resources)[i];
      if (spec.weight == 0)
        spec.weight = 1;
      // The formula ignores weights; anything but 1 would promise an effect it does not have.
      if (spec.weight != 1)
        return kube::makeKubeError(
            fmt::format("resources[{}].weight: Invalid value: {}: must be 1", i, spec.weight));
    }
    out->resources = std::move(*resources);
  }
  return std::shared_ptr<const NodeResourcesBalancedAllocationArgs>(std::move(out));
}

NodeResourcesBalancedAllocation::NodeResourcesBalancedAllocation(
    std::shared_ptr<const NodeResourcesBalancedAllocationArgs> args)
    : args_(args ? std::move(args) : std::make_shared<const NodeResourcesBalancedAllocationArgs>()),
      resources_(resolveResources(args_->resources)) {}

Status NodeResourcesBalancedAllocation::score(const CycleState&, const PodInfo& pod,
                                              const NodeInfo& node, std::int64_t& score) const {
  if (!node.node)
    return Status::error("node not found");
  score = resources_.empty() ? balancedAllocationScore(node, pod)
                             : balancedAllocationScore(node, pod, resources_);
  return Status::success();
}

}  // namespace koord::roles::scheduler::upstream
