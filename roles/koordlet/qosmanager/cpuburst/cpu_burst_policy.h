// CPUBurst's configuration without I/O: the NodeSLO's cpuBurstStrategy, a pod's
// koordinator.sh/cpuBurst override of it, and the cgroup values the policy derives from a limit.
#pragma once

#include <boost/json/fwd.hpp>

#include <cstdint>
#include <optional>
#include <string_view>

#include "koord/kube/error.h"

namespace koord::roles::koordlet::qosmanager {

/// The pod annotation whose JSON (CPUBurstConfig's fields) overrides the node's strategy.
inline constexpr std::string_view kAnnotationPodCPUBurst = "koordinator.sh/cpuBurst";
/// The longest koordinator.sh/cpuBurst value decoded; a real one is a few dozen bytes.
inline constexpr std::size_t kMaxPodCPUBurstBytes = 4096;

enum class CPUBurstPolicy : std::uint8_t {
  kNone,               // "none": burst 0 and every raised quota back to its limit
  kCPUBurstOnly,       // "cpuBurstOnly": cpu.cfs_burst_us / cpu.max.burst only
  kCFSQuotaBurstOnly,  // "cfsQuotaBurstOnly": throttled containers' quota raised only
  kAuto,               // "auto": both
};
std::string_view cpuBurstPolicyName(CPUBurstPolicy p);
std::optional<CPUBurstPolicy> cpuBurstPolicyNamed(std::string_view name);

// The API's validation bounds where it has them; the upper bounds it lacks are koord's, far
// above any useful setting, so that no product or token count can overflow.
inline constexpr std::int64_t kMinCPUBurstPercent = 1;
inline constexpr std::int64_t kMaxCPUBurstPercent = 10000;
inline constexpr std::int64_t kMinCFSQuotaBurstPercent = 100;
inline constexpr std::int64_t kMaxCFSQuotaBurstPercent = 10000;
inline constexpr std::int64_t kMinCFSQuotaBurstPeriodSeconds = -1;
inline constexpr std::int64_t kMaxCFSQuotaBurstPeriodSeconds = 7 * 24 * 3600;

/// CPUBurstConfig with Koordinator's defaults (DefaultCPUBurstConfig).
struct CPUBurstConfig {
  CPUBurstPolicy policy = CPUBurstPolicy::kNone;
  /// cfs burst as a percentage of the container's CPU limit.
  std::int64_t cpu_burst_percent = 1000;
  /// The ceiling a raised quota may reach, as a percentage of the limit's quota.
  std::int64_t cfs_quota_burst_percent = 300;
  /// How long a container may run above its limit before the limiter takes the quota back
  /// down; -1 is without end.
  std::int64_t cfs_quota_burst_period_seconds = -1;

  bool cpuBurstEnabled() const {
    return policy == CPUBurstPolicy::kCPUBurstOnly || policy == CPUBurstPolicy::kAuto;
  }
  bool cfsQuotaBurstEnabled() const {
    return policy == CPUBurstPolicy::kCFSQuotaBurstOnly || policy == CPUBurstPolicy::kAuto;
  }
  friend bool operator==(const CPUBurstConfig&, const CPUBurstConfig&) = default;
};

/// The NodeSLO's spec.cpuBurstStrategy (CPUBurstConfig inline).
struct CPUBurstStrategy {
  CPUBurstConfig config;
  /// Quotas are scaled down once the share pool's usage reaches this percentage of it.
  std::int64_t share_pool_threshold_percent = 50;
  friend bool operator==(const CPUBurstStrategy&, const CPUBurstStrategy&) = default;
};

/// Decodes spec.cpuBurstStrategy; absent fields keep the defaults, as does an empty policy. Errors
/// name the field: a type other than Go's, a number outside its bound, a policy Koordinator does
/// not define.
kube::Expected<CPUBurstStrategy> decodeCPUBurstStrategy(const boost::json::object& strategy);

/// `node` with the fields the pod's koordinator.sh/cpuBurst value sets (nullopt: no annotation)
/// laid over it. sharePoolThresholdPercent and unknown fields are ignored, as Go's decoder
/// ignores them; JSON null overrides nothing. Errors name the annotation: malformed JSON, a value
/// past kMaxPodCPUBurstBytes, and decodeCPUBurstStrategy's.
kube::Expected<CPUBurstConfig> podCPUBurstConfig(const CPUBurstConfig& node,
                                                 std::optional<std::string_view> annotation);

/// Koordinator's cfs period, on which its burst and base quota are computed (100 ms).
inline constexpr std::int64_t kCFSBasePeriodUs = 100000;
/// The least cfs quota the kernel takes.
inline constexpr std::int64_t kCFSQuotaMinUs = 1000;

/// The quota of a `limit_milli` CPU limit (MilliCPUToQuota): -1 for none (<= 0), else at least
/// kCFSQuotaMinUs.
std::int64_t baseCfsQuota(std::int64_t limit_milli);
/// cpu.cfs_burst_us for a container: limit x cpuBurstPercent over the base period; 0 when the
/// policy has no cpu burst or there is no limit.
std::int64_t containerCfsBurst(std::int64_t limit_milli, const CPUBurstConfig& config);
/// The highest quota the cfs quota burst may raise `base` to: base x cfsQuotaBurstPercent.
std::int64_t cfsQuotaCeiling(std::int64_t base, const CPUBurstConfig& config);

}  // namespace koord::roles::koordlet::qosmanager
