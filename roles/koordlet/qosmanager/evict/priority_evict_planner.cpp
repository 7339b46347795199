#include "qosmanager/evict/priority_evict_planner.h"

#include <algorithm>
#include <limits>
#include <tuple>

#include "koord/core/saturating.h"

namespace koord::roles::koordlet::qosmanager {

kube::Expected<PriorityEvictPlan> planPriorityEviction(
    const UsedThresholdEvictStrategy& strategy, const NodeUse& node,
    std::span<const PriorityEvictCandidate> candidates) {
  if (node.capacity <= 0)
    return kube::makeKubeError("node capacity must be > 0");
  // used * 100 must not overflow; a usage that large is a bad sample, not a real node.
  if (node.used < 0 || node.used > std::numeric_limits<std::int64_t>::max() / 100 ||
      node.capacity > std::numeric_limits<std::int64_t>::max() / 100)
    return kube::makeKubeError("node usage or capacity out of range");
  PriorityEvictPlan plan;
  plan.usage_percent = node.used * 100 / node.capacity;
  plan.lower_percent = strategy.effectiveLowerPercent();
  if (!strategy.threshold_percent || !strategy.priority_threshold ||
      plan.usage_percent < *strategy.threshold_percent)
    return plan;
  plan.release = node.capacity * (plan.usage_percent - plan.lower_percent) / 100;
  if (plan.release <= 0) {
    plan.release = 0;
    return plan;
  }

  std::vector<const PriorityEvictCandidate*> ranked;
  for (const auto& c : candidates) {
    if (c.used && c.eviction_enabled && c.policy_allowed &&
        c.priority <= *strategy.priority_threshold)
      ranked.push_back(&c);
  }
  std::sort(ranked.begin(), ranked.end(), [](const auto* a, const auto* b) {
    return std::tuple(a->eviction_priority, a->priority, a->label_priority, -*a->used, a->key) <
           std::tuple(b->eviction_priority, b->priority, b->label_priority, -*b->used, b->key);
  });
  // Pods evicted a moment ago release first, wherever they rank: Koordinator counts them as it
  // meets them, and a round must never pick new victims for pressure already being relieved.
  std::int64_t released = 0;
  for (const auto* c : ranked) {
    if (c->already_evicted)
      released = koord::saturatingAdd(released, std::max<std::int64_t>(0, *c->used));
  }
  plan.pending = released;
  for (const auto* c : ranked) {
    if (c->already_evicted)
      continue;
    if (released >= plan.release) {
      plan.reserves.push_back(c->key);
    } else {
      released = koord::saturatingAdd(released, std::max<std::int64_t>(0, *c->used));
      plan.victims.push_back(c->key);
    }
  }
  return plan;
}

}  // namespace koord::roles::koordlet::qosmanager
