// What CPUEvict and MemoryEvict (eviction of any pod up to a priority, Koordinator master) read
// from a NodeSLO's resourceUsedThresholdWithBE: the node-usage threshold, the level eviction
// brings usage back to, the highest priority it may evict and CPU's averaging window.
#pragma once

#include <boost/json/fwd.hpp>

#include <cstdint>
#include <optional>
#include <string_view>

#include "koord/kube/error.h"

namespace koord::roles::koordlet::qosmanager {

/// Feature names: they end the eviction reason and name the policy in a pod's eviction-policy.
inline constexpr std::string_view kCPUEvictFeature = "CPUEvict";
inline constexpr std::string_view kMemoryEvictFeature = "MemoryEvict";

/// Koordinator's cpuReleaseBufferPercent and memoryReleaseBufferPercent: how far below the
/// threshold an unset lower percent sits.
inline constexpr std::int64_t kUsedThresholdReleaseBufferPercent = 2;

enum class EvictResource : std::uint8_t { kCPU, kMemory };

struct UsedThresholdEvictStrategy {
  bool enable = false;
  /// cpuEvictThresholdPercent (no default: CPUEvict does nothing until it is set) or
  /// memoryEvictThresholdPercent (default 70, as DefaultResourceThresholdStrategy).
  std::optional<std::int64_t> threshold_percent;
  /// cpuEvictLowerPercent / memoryEvictLowerPercent; unset means threshold - 2.
  std::optional<std::int64_t> lower_percent;
  /// evictEnabledPriorityThreshold: pods above it are never evicted. No default: without it the
  /// feature does nothing, as in Koordinator.
  std::optional<std::int32_t> priority_threshold;
  /// cpuEvictTimeWindowSeconds (CPU only): the node usage is averaged over
  /// max(window, collect interval).
  std::optional<std::int64_t> time_window_seconds;

  std::int64_t effectiveLowerPercent() const {
    return lower_percent.value_or(threshold_percent.value_or(0) -
                                  kUsedThresholdReleaseBufferPercent);
  }
};

/// Reads the fields of `resource`'s feature; absent or null keeps the default. Errors name the
/// field: a JSON type other than Go's, a percent outside 0..100, a priority outside int32, a
/// window <= 0.
kube::Expected<UsedThresholdEvictStrategy> decodeUsedThresholdEvictStrategy(
    const boost::json::object& resource_used_threshold_with_be, EvictResource resource);

/// Koordinator's isUsedThresholdConfigValid / the MemoryEvict config check, run before every
/// round: "" when the feature can run, else why not (threshold or priority threshold unset, lower
/// not below the threshold).
std::string usedThresholdConfigProblem(const UsedThresholdEvictStrategy& s, EvictResource resource);

}  // namespace koord::roles::koordlet::qosmanager
