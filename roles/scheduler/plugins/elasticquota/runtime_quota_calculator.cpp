#include "plugins/elasticquota/runtime_quota_calculator.h"

#include <algorithm>

namespace koord::roles::scheduler::elasticquota {

void redistribute(std::span<QuotaNode> nodes, std::int64_t total) {
  std::int64_t left = total;
  std::int64_t weight = 0;
  std::vector<QuotaNode*> hungry;
  for (QuotaNode& node : nodes) {
    const std::int64_t floor = std::max(node.min, node.guarantee);
    if (node.request > floor) {
      hungry.push_back(&node);
      weight = saturatingAdd(weight, node.shared_weight);
      node.runtime = floor;
    } else {
      node.runtime = node.allow_lent_resource ? node.request : floor;
    }
    left = saturatingSub(left, node.runtime);
  }
  // Each round either meets some request (and that child leaves) or hands out everything, so
  // there are at most as many rounds as children.
  while (left > 0 && weight > 0 && !hungry.empty()) {
    std::vector<QuotaNode*> still_hungry;
    std::int64_t still_weight = 0;
    std::int64_t returned = 0;
    for (QuotaNode* node : hungry) {
      const double share = static_cast<double>(node->shared_weight) * static_cast<double>(left) /
                               static_cast<double>(weight) +
                           0.5;
      node->runtime = saturatingAdd(node->runtime, static_cast<std::int64_t>(share));
      if (node->runtime < node->request) {
        still_hungry.push_back(node);
        still_weight = saturatingAdd(still_weight, node->shared_weight);
      } else {
        returned = saturatingAdd(returned, node->runtime - node->request);
        node->runtime = node->request;
      }
    }
    hungry = std::move(still_hungry);
    weight = still_weight;
    left = returned;
  }
}

std::vector<Resources> calculateRuntime(std::span<const ChildQuota> children,
                                        const Resources& total,
                                        std::span<const std::string> resource_keys) {
  std::vector<Resources> out(children.size());
  std::vector<QuotaNode> nodes(children.size());
  for (const std::string& key : resource_keys) {
    for (std::size_t i = 0; i < children.size(); ++i) {
      const ChildQuota& child = children[i];
      nodes[i] = QuotaNode{.shared_weight = valueOf(child.shared_weight, key),
                           .request = valueOf(child.limited_request, key),
                           .min = valueOf(child.min, key),
                           .guarantee = valueOf(child.guaranteed, key),
                           .allow_lent_resource = child.allow_lent_resource};
    }
    redistribute(nodes, valueOf(total, key));
    for (std::size_t i = 0; i < children.size(); ++i)
      out[i][key] = nodes[i].runtime;
  }
  return out;
}

Resources scaledMinQuota(const Resources& total, const Resources& sum_of_children_min,
                         const Resources& original_min) {
  Resources out = original_min;
  for (const auto& [name, available] : total) {
    const std::int64_t sum = valueOf(sum_of_children_min, name);
    if (available >= sum)
      continue;
    std::int64_t scaled = 0;
    if (available > 0 && sum > 0) {
      scaled = static_cast<std::int64_t>(static_cast<double>(available) *
                                         static_cast<double>(valueOf(original_min, name)) /
                                         static_cast<double>(sum));
    }
    out[name] = scaled;
  }
  return out;
}

}  // namespace koord::roles::scheduler::elasticquota
