// What BE eviction (BEMemoryEvict, BECPUEvict) reads from configuration: its fields of a NodeSLO's
// resourceUsedThresholdWithBE, with Koordinator's defaults and checks, and a pod's eviction-policy.
#pragma once

#include <boost/json/object.hpp>

#include <cstdint>
#include <optional>
#include <string_view>

#include "koord/kube/error.h"

namespace koord::roles::koordlet::qosmanager {

/// The koordlet feature names: they also name the policy a pod's eviction-policy annotation lists
/// and end the eviction reason.
inline constexpr std::string_view kBEMemoryEvictFeature = "BEMemoryEvict";
inline constexpr std::string_view kBECPUEvictFeature = "BECPUEvict";

/// Koordinator's memoryReleaseBufferPercent: how far below the threshold an unset
/// memoryEvictLowerPercent sits.
inline constexpr std::int64_t kMemoryReleaseBufferPercent = 2;
/// Koordinator's beCPUSatisfactionLowPercentMax and beCPUSatisfactionUpperPercentMax.
inline constexpr std::int64_t kBECPUSatisfactionLowerPercentMax = 60;
inline constexpr std::int64_t kBECPUSatisfactionUpperPercentLimit = 100;

/// BEMemoryEvict's fields, defaulted as DefaultResourceThresholdStrategy does.
struct BEMemoryEvictStrategy {
  bool enable = false;
  std::int64_t threshold_percent = 70;
  /// memoryEvictLowerPercent; unset means threshold_percent - kMemoryReleaseBufferPercent.
  std::optional<std::int64_t> lower_percent;

  /// The node memory use, in percent, that eviction brings the node back to.
  std::int64_t effectiveLowerPercent() const {
    return lower_percent.value_or(threshold_percent - kMemoryReleaseBufferPercent);
  }
};

/// Reads enable, memoryEvictThresholdPercent and memoryEvictLowerPercent; absent or null keeps the
/// default, other fields are ignored. Errors name the field: a JSON type other than Go's, a
/// percent outside 0..100, and (only when enable is true, as the koordlet checks the switch
/// before the config) a lower percent not below the threshold.
kube::Expected<BEMemoryEvictStrategy> decodeBEMemoryEvictStrategy(
    const boost::json::object& resource_used_threshold_with_be);

/// cpuEvictPolicy: "evictByRealLimit" (the default) measures BE satisfaction against the BE
/// pods' real CPU limit, "evictByAllocatable" against the node's batch-cpu allocatable.
enum class CPUEvictPolicy : std::uint8_t { kEvictByRealLimit, kEvictByAllocatable };
std::string_view cpuEvictPolicyName(CPUEvictPolicy p);

/// BECPUEvict's fields. The satisfaction percents have no default in Koordinator: a decoded
/// strategy with enable true always has both.
struct BECPUEvictStrategy {
  bool enable = false;
  std::optional<std::int64_t> satisfaction_lower_percent;
  std::optional<std::int64_t> satisfaction_upper_percent;
  /// cpuEvictBEUsageThresholdPercent: unset means 90 (Koordinator's beCPUUsageThresholdPercent).
  std::int64_t usage_threshold_percent = 90;
  /// cpuEvictTimeWindowSeconds: unset means one collect interval.
  std::optional<std::int64_t> time_window_seconds;
  CPUEvictPolicy policy = CPUEvictPolicy::kEvictByRealLimit;
};

/// Reads enable, cpuEvictBESatisfactionLowerPercent, cpuEvictBESatisfactionUpperPercent,
/// cpuEvictBEUsageThresholdPercent, cpuEvictTimeWindowSeconds and cpuEvictPolicy; absent or null
/// keeps the default. Errors name the field: a JSON type other than Go's, a percent outside
/// 0..100, a window <= 0, and (only when enable is true) Koordinator's isSatisfactionConfigValid:
/// both satisfaction percents set, lower in (0, 60], upper in (0, 100) and not below lower. A
/// policy other than "evictByAllocatable" is kEvictByRealLimit, as the koordlet compares only
/// with that string.
kube::Expected<BECPUEvictStrategy> decodeBECPUEvictStrategy(
    const boost::json::object& resource_used_threshold_with_be);

/// Koordinator's IsEvictionPolicyAllowed on the koordinator.sh/eviction-policy annotation: a pod
/// without it may be evicted by any feature; with it, only by the features its JSON array of
/// strings names. An annotation that is not such an array forbids every feature.
bool isEvictionPolicyAllowed(std::optional<std::string_view> eviction_policy_annotation,
                             std::string_view feature);

}  // namespace koord::roles::koordlet::qosmanager
