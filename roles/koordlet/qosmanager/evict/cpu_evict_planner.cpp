#include "qosmanager/evict/cpu_evict_planner.h"
#include "qosmanager/evict/victim_selection.h"

#include <algorithm>
#include <limits>
#include <tuple>

namespace koord::roles::koordlet::qosmanager {

namespace {

// Below one core Koordinator does not trust the usage ratio and treats usage as high enough.
constexpr double kOneCoreMilli = 1000;

// Go's int64(x) for the release: truncation toward zero. Out of range Go's result depends on the
// CPU; here NaN is 0 and the rest saturates, so no input makes the conversion undefined.
std::int64_t truncateToInt64(double x) {
  constexpr double kBound = 9223372036854775808.0;  // 2^63, the first double past INT64_MAX
  if (x != x)
    return 0;
  if (x >= kBound)
    return std::numeric_limits<std::int64_t>::max();
  if (x < -kBound)
    return std::numeric_limits<std::int64_t>::min();
  return static_cast<std::int64_t>(x);
}

// Koordinator's getBEMilliAllocatable: -1 (never evicts) without a usable allocatable.
double batchMilliAllocatable(const std::optional<std::int64_t>& allocatable) {
  if (!allocatable || *allocatable < 0)
    return -1;
  if (*allocatable == 0)
    return kMinAllocatableBatchMilliCPU;
  return static_cast<double>(*allocatable);
}

// Koordinator's isBECPUUsageHighEnough.
bool usageHighEnough(double usage_milli, double limit_milli, std::int64_t threshold_percent) {
  if (limit_milli <= 0)
    return false;
  if (limit_milli < kOneCoreMilli)
    return true;
  return !(usage_milli / limit_milli < static_cast<double>(threshold_percent) / 100);
}

// Koordinator's calculateResourceMilliToReleaseBySatisfaction, in the same double arithmetic so
// that the truncated result matches to the milli-core.
std::int64_t releaseBySatisfaction(double request_milli, double limit_milli, std::int64_t lower,
                                   std::int64_t upper) {
  if (request_milli <= 0)
    return 0;
  const double satisfaction = limit_milli / request_milli;
  if (satisfaction > static_cast<double>(lower) / 100)
    return 0;
  const double gap = static_cast<double>(upper) / 100 - satisfaction;
  if (gap <= 0)
    return 0;
  return truncateToInt64(request_milli * gap);
}

bool enoughSamples(std::int64_t samples, std::int64_t interval_seconds,
                   std::int64_t window_seconds) {
  std::int64_t covered = 0;
  if (__builtin_mul_overflow(samples, interval_seconds, &covered))
    return (samples > 0) == (interval_seconds > 0);
  return covered >= window_seconds / 3;
}

double usageRatio(const BECPUEvictCandidate& c) {
  if (c.batch_cpu_request_milli <= 0)
    return 0;
  return static_cast<double>(c.cpu_used_milli) / static_cast<double>(c.batch_cpu_request_milli);
}

// getBEPodEvictInfoAndSort's order made a strict weak order: Koordinator compares priorities only
// when both pods have one (so its comparator is not transitive when some lack it) and leaves
// equal ratios unordered; an unset priority counts as 0, Kubernetes' default, and name (reversed,
// as BEMemoryEvict orders its ties) then uid break the remaining ties.
bool evictsBefore(const BECPUEvictCandidate* a, const BECPUEvictCandidate* b) {
  const std::int32_t pa = a->priority.value_or(0);
  const std::int32_t pb = b->priority.value_or(0);
  if (pa != pb)
    return pa < pb;
  const double ra = usageRatio(*a);
  const double rb = usageRatio(*b);
  if (ra != rb)
    return ra > rb;
  return std::tie(b->name, a->uid) < std::tie(a->name, b->uid);
}

}  // namespace

std::string_view beCPUEvictOutcomeName(BECPUEvictOutcome o) {
  switch (o) {
    case BECPUEvictOutcome::kDisabled:
      return "disabled";
    case BECPUEvictOutcome::kTooFewSamples:
      return "too few samples in the window";
    case BECPUEvictOutcome::kAverageUsageLow:
      return "average BE usage below the threshold";
    case BECPUEvictOutcome::kAverageSatisfied:
      return "average BE satisfaction high enough";
    case BECPUEvictOutcome::kLatestUsageLow:
      return "latest BE usage below the threshold";
    case BECPUEvictOutcome::kLatestSatisfied:
      return "latest BE satisfaction high enough";
    case BECPUEvictOutcome::kEvict:
      return "evict";
  }
  return "unknown";
}

std::int64_t beCPUEvictWindowSeconds(const BECPUEvictStrategy& strategy,
                                     std::int64_t collect_interval_seconds) {
  if (strategy.time_window_seconds && *strategy.time_window_seconds > collect_interval_seconds)
    return *strategy.time_window_seconds;
  return collect_interval_seconds;
}

BECPUEvictPlan planBECPUEviction(const BECPUEvictStrategy& strategy, const BECPUEvictInput& input,
                                 std::span<const BECPUEvictCandidate> candidates) {
  BECPUEvictPlan plan;
  if (!strategy.enable || !strategy.satisfaction_lower_percent ||
      !strategy.satisfaction_upper_percent) {
    return plan;
  }
  const std::int64_t lower = *strategy.satisfaction_lower_percent;
  const std::int64_t upper = *strategy.satisfaction_upper_percent;
  const bool by_allocatable = strategy.policy == CPUEvictPolicy::kEvictByAllocatable;
  const double allocatable = batchMilliAllocatable(input.batch_cpu_allocatable_milli);

  const BECPUAllocation& avg = input.window_average;
  const double avg_limit = by_allocatable ? allocatable : avg.real_limit.milli;
  const std::int64_t samples =
      std::min({avg.usage.samples, avg.request.samples, avg.real_limit.samples});
  if (!enoughSamples(samples, input.collect_interval_seconds, input.window_seconds)) {
    plan.outcome = BECPUEvictOutcome::kTooFewSamples;
    return plan;
  }
  if (!usageHighEnough(avg.usage.milli, avg_limit, strategy.usage_threshold_percent)) {
    plan.outcome = BECPUEvictOutcome::kAverageUsageLow;
    return plan;
  }
  std::int64_t release = releaseBySatisfaction(avg.request.milli, avg_limit, lower, upper);
  if (release <= 0) {
    plan.outcome = BECPUEvictOutcome::kAverageSatisfied;
    return plan;
  }

  const BECPUAllocation& latest = input.latest;
  const double latest_limit = by_allocatable ? allocatable : latest.real_limit.milli;
  if (!usageHighEnough(latest.usage.milli, latest_limit, strategy.usage_threshold_percent)) {
    plan.outcome = BECPUEvictOutcome::kLatestUsageLow;
    return plan;
  }
  // Requests and limits rarely change: when they have not, the average's answer stands.
  if (latest.request.milli != avg.request.milli || latest_limit != avg_limit) {
    const std::int64_t by_latest =
        releaseBySatisfaction(latest.request.milli, latest_limit, lower, upper);
    if (by_latest <= 0) {
      plan.outcome = BECPUEvictOutcome::kLatestSatisfied;
      return plan;
    }
    release = std::min(release, by_latest);
  }
  plan.outcome = BECPUEvictOutcome::kEvict;
  plan.release_milli = release;
  takeVictims(
      candidates, plan.release_milli, evictsBefore,
      [](const BECPUEvictCandidate& c) {
        const std::int64_t release = std::max<std::int64_t>(c.batch_cpu_request_milli, 0);
        return std::pair{BECPUEvictVictim{c.key, c.name, c.uid, release}, release};
      },
      plan.victims, plan.reserves);
  return plan;
}

}  // namespace koord::roles::koordlet::qosmanager
