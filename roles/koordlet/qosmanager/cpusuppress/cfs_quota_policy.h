// The cfsQuota suppress policy: the besteffort cgroup's next CFS quota from the suppress value,
// with a floor, a dead band against jitter and a growth step, as Koordinator applies them.
#pragma once

#include <cstdint>
#include <optional>

namespace koord::roles::koordlet::qosmanager {

/// The period the quota is computed for, whatever the cgroup's own period is (Koordinator's
/// DefaultCPUCFSPeriod).
inline constexpr std::int64_t kBECFSPeriodMicros = 100000;
/// The smallest quota BE is given: 2% of one CPU.
inline constexpr std::int64_t kBEMinCFSQuotaMicros = 2000;
/// cpu.cfs_quota_us for "no limit" (cpu.max "max").
inline constexpr std::int64_t kCFSQuotaUnlimited = -1;

/// The quota to write, or nullopt to leave the cgroup alone. target = suppress milli x period /
/// 1000, at least kBEMinCFSQuotaMicros. Skipped when |target - current| is under 1% of the
/// node's cores x period, unless target is the minimum (suppressing hard is never deferred).
/// Growth is capped at 10% of cores x period per round, except from unlimited, which drops to
/// the target at once. `node_capacity_milli` is rounded up to whole cores, as Koordinator's
/// Quantity.Value() does. The dead band also applies to an unlimited (-1) current quota, as in
/// Koordinator: BE stays unlimited while the target, unless it is the minimum, is below 1% of
/// cores x period.
std::optional<std::int64_t> nextBECFSQuota(std::int64_t current_quota_micros,
                                           std::int64_t suppress_milli,
                                           std::int64_t node_capacity_milli);

}  // namespace koord::roles::koordlet::qosmanager
