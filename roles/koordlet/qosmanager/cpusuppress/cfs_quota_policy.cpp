#include "qosmanager/cpusuppress/cfs_quota_policy.h"

#include <algorithm>
#include <cmath>

namespace koord::roles::koordlet::qosmanager {

namespace {

// Smaller moves than this share of the node are noise from one sample to the next.
constexpr double kBypassQuotaDeltaRatio = 0.01;
// Scale up slowly: a short LS lull should not hand BE the node at once.
constexpr double kMaxIncreaseRatio = 0.1;

}  // namespace

std::optional<std::int64_t> nextBECFSQuota(std::int64_t current, std::int64_t suppress_milli,
                                           std::int64_t node_capacity_milli) {
  const std::int64_t target =
      std::max(suppress_milli * kBECFSPeriodMicros / 1000, kBEMinCFSQuotaMicros);
  const std::int64_t cores =
      node_capacity_milli > 0 ? (node_capacity_milli + 999) / 1000 : node_capacity_milli / 1000;
  // Doubles on purpose: the thresholds are Koordinator's float products, compared unrounded.
  const double period_cores = static_cast<double>(cores) * static_cast<double>(kBECFSPeriodMicros);
  const double min_delta = period_cores * kBypassQuotaDeltaRatio;
  const double delta = static_cast<double>(target) - static_cast<double>(current);
  if (std::abs(delta) < min_delta && target != kBEMinCFSQuotaMicros)
    return std::nullopt;
  const double max_increase = period_cores * kMaxIncreaseRatio;
  if (delta > max_increase && current != kCFSQuotaUnlimited)
    return current + static_cast<std::int64_t>(max_increase);
  return target;
}

}  // namespace koord::roles::koordlet::qosmanager
