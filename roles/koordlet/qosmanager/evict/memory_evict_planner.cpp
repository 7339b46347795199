#include "qosmanager/evict/memory_evict_planner.h"
#include "qosmanager/evict/victim_selection.h"

#include <algorithm>
#include <limits>
#include <tuple>

#include <fmt/format.h>

namespace koord::roles::koordlet::qosmanager {

namespace {

// A negative reading is as good as none.
std::int64_t knownUse(const BEMemoryEvictCandidate& c) {
  return std::max<std::int64_t>(c.memory_used_bytes, 0);
}

// getSortedBEPodInfos' order made a strict weak order: Koordinator compares priorities only when
// both pods have one (so its comparator is not transitive when some lack it) and leaves equal
// non-zero uses unordered; an unset priority counts as 0, Kubernetes' default, and name (reversed,
// as Koordinator orders unknown-use pods) then uid break the remaining ties.
bool evictsBefore(const BEMemoryEvictCandidate* a, const BEMemoryEvictCandidate* b) {
  const std::int32_t pa = a->priority.value_or(0);
  const std::int32_t pb = b->priority.value_or(0);
  if (pa != pb)
    return pa < pb;
  const std::int64_t ua = knownUse(*a);
  const std::int64_t ub = knownUse(*b);
  if ((ua == 0) != (ub == 0))
    return ub == 0;
  if (ua != ub)
    return ua > ub;
  return std::tie(b->name, a->uid) < std::tie(a->name, b->uid);
}

}  // namespace

kube::Expected<BEMemoryEvictPlan> planBEMemoryEviction(
    const BEMemoryEvictStrategy& strategy, const NodeMemoryUse& node,
    std::span<const BEMemoryEvictCandidate> candidates) {
  BEMemoryEvictPlan plan;
  if (!strategy.enable)
    return plan;
  if (node.capacity_bytes <= 0) {
    return kube::makeKubeError(
        fmt::format("node memory capacity must be > 0, got {}", node.capacity_bytes));
  }
  std::int64_t used_times_100 = 0;
  if (__builtin_mul_overflow(node.used_bytes, std::int64_t{100}, &used_times_100)) {
    return kube::makeKubeError(fmt::format(
        "node memory used {} bytes is too large to take a percent of", node.used_bytes));
  }
  plan.usage_percent = used_times_100 / node.capacity_bytes;
  plan.lower_percent = strategy.effectiveLowerPercent();
  if (plan.usage_percent < strategy.threshold_percent)
    return plan;
  std::int64_t release_times_100 = 0;
  if (__builtin_mul_overflow(node.capacity_bytes, plan.usage_percent - plan.lower_percent,
                             &release_times_100)) {
    return kube::makeKubeError(fmt::format(
        "node memory capacity {} bytes is too large to take a percent of", node.capacity_bytes));
  }
  plan.release_bytes = release_times_100 / 100;
  if (plan.release_bytes <= 0)
    return plan;

  takeVictims(
      candidates, plan.release_bytes, evictsBefore,
      [](const BEMemoryEvictCandidate& c) {
        return std::pair{BEMemoryEvictVictim{c.key, c.name, c.uid, knownUse(c)}, knownUse(c)};
      },
      plan.victims, plan.reserves);
  return plan;
}

}  // namespace koord::roles::koordlet::qosmanager
