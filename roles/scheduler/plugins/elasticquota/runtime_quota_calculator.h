// How a parent's runtime quota is shared among its child quotas, one resource at a time:
// Koordinator's RuntimeQuotaCalculator water-filling, as pure functions over plain figures.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "plugins/elasticquota/resources.h"

namespace koord::roles::scheduler::elasticquota {

/// One child quota in one resource dimension.
struct QuotaNode {
  std::int64_t shared_weight = 0;
  /// The child's request, already capped at its max.
  std::int64_t request = 0;
  /// The child's min after scaling (see scaledMinQuota).
  std::int64_t min = 0;
  /// Koordinator's guarantee (ElasticQuotaGuaranteeUsage); a floor like min.
  std::int64_t guarantee = 0;
  bool allow_lent_resource = true;
  /// Output.
  std::int64_t runtime = 0;
};

/// Each child first gets what it asks for up to its min (all of its min when it does not lend);
/// what is left of `total` then goes to the children asking for more, in proportion to their
/// shared weights and never past their requests, again and again until nothing is left or every
/// request is met. Shares are rounded to the nearest unit, as Koordinator rounds them.
void redistribute(std::span<QuotaNode> nodes, std::int64_t total);

/// One child quota of a parent, across resources.
struct ChildQuota {
  Resources shared_weight;
  Resources limited_request;
  Resources min;
  Resources guaranteed;
  bool allow_lent_resource = true;
};

/// Every child's runtime in each of `resource_keys` (a child gets every key, 0 where nothing
/// comes to it), sharing `total` (the parent's runtime; a key it lacks shares nothing).
std::vector<Resources> calculateRuntime(std::span<const ChildQuota> children,
                                        const Resources& total,
                                        std::span<const std::string> resource_keys);

/// A child's min once its siblings' mins are fitted into the parent's runtime: unchanged in
/// each resource where the children's mins together fit `total`, else cut in proportion
/// (total * min / sum of mins, rounded down; 0 when total is not positive). Only the resources
/// `total` names are considered.
Resources scaledMinQuota(const Resources& total, const Resources& sum_of_children_min,
                         const Resources& original_min);

}  // namespace koord::roles::scheduler::elasticquota
