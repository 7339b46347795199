// The cfs quota burst's decisions without I/O: how loaded the node's share pool is, what each
// container's quota should do this round, and the quota that follows (Koordinator's scale-up by
// 1.2 and scale-down by 0.8 steps between the limit's quota and its ceiling).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "koord/apis/extension.h"

namespace koord::roles::koordlet::qosmanager {

inline constexpr double kCfsScaleUpStep = 1.2;
inline constexpr double kCfsScaleDownStep = 0.8;
/// Below the threshold but above this share of it, the node is cooling: quotas are held.
inline constexpr double kSharePoolCoolingRatio = 0.9;

enum class NodeBurstState : std::uint8_t {
  kOverload,  // share pool usage >= threshold: every raised quota comes down
  kCooling,   // threshold x 0.9 <= usage < threshold: nothing is raised
  kIdle,      // below that: throttled containers are raised
  kUnknown,   // no recent usage: nothing is raised
};
std::string_view nodeBurstStateName(NodeBurstState s);

/// One pod as the share pool counts it: LSE and LSR pods' requests are taken out of the pool,
/// and their usage with BE pods'; everyone else's usage (unlabelled BestEffort pods' too)
/// stays in, as does the system's.
struct SharePoolPod {
  apis::QoSClass raw_qos = apis::QoSClass::kNone;
  std::int64_t request_milli = 0;
  /// Cores, averaged over the window; nullopt when the cache has none.
  std::optional<double> used;
};

/// The share pool's usage over its size (1 when nothing of the node is left to it); nullopt
/// without the node's usage or with no CPUs.
std::optional<double> sharePoolUsageRatio(std::optional<double> node_used_cores, double node_cpus,
                                          const std::vector<SharePoolPod>& pods);

NodeBurstState nodeBurstState(std::optional<double> share_pool_ratio,
                              std::int64_t threshold_percent);

enum class CfsOperation : std::uint8_t { kScaleUp, kScaleDown, kRemain, kReset };
std::string_view cfsOperationName(CfsOperation op);

/// What the container alone asks for: back to its limit where the policy has no cfs quota burst,
/// down where the limiter's tokens ran out, up when it was throttled since the last round, else
/// (no throttling, or nothing to compare with yet) as it is.
CfsOperation containerCfsOperation(bool cfs_quota_burst_enabled, bool allowed_by_limiter,
                                   std::optional<double> throttled_ratio);

/// The node's say: overloaded, raised and held quotas come down; cooling or unknown, nothing goes
/// up.
CfsOperation cfsOperationForNode(NodeBurstState node, CfsOperation op);

/// The quota after `op` on `current`, kept in [base, ceiling].
std::int64_t targetCfsQuota(std::int64_t current, std::int64_t base, std::int64_t ceiling,
                            CfsOperation op);

}  // namespace koord::roles::koordlet::qosmanager
