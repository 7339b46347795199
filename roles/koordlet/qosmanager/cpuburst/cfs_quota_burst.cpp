#include "qosmanager/cpuburst/cfs_quota_burst.h"

#include <algorithm>

namespace koord::roles::koordlet::qosmanager {

std::string_view nodeBurstStateName(NodeBurstState s) {
  switch (s) {
    case NodeBurstState::kOverload:
      return "overload";
    case NodeBurstState::kCooling:
      return "cooling";
    case NodeBurstState::kIdle:
      return "idle";
    case NodeBurstState::kUnknown:
      return "unknown";
  }
  return "unknown";
}

std::optional<double> sharePoolUsageRatio(std::optional<double> node_used_cores, double node_cpus,
                                          const std::vector<SharePoolPod>& pods) {
  if (!node_used_cores || node_cpus <= 0)
    return std::nullopt;
  double total = node_cpus;
  double used = *node_used_cores;
  for (const auto& p : pods) {
    const bool dedicated = p.raw_qos == apis::QoSClass::kLSE || p.raw_qos == apis::QoSClass::kLSR;
    if (dedicated)
      total -= static_cast<double>(p.request_milli) / 1000.0;
    if (p.used && (dedicated || p.raw_qos == apis::QoSClass::kBE))
      used -= *p.used;
  }
  if (total <= 0)
    return 1.0;
  return used / total;
}

NodeBurstState nodeBurstState(std::optional<double> share_pool_ratio,
                              std::int64_t threshold_percent) {
  if (!share_pool_ratio)
    return NodeBurstState::kUnknown;
  const double threshold = static_cast<double>(threshold_percent) / 100.0;
  if (*share_pool_ratio >= threshold)
    return NodeBurstState::kOverload;
  if (*share_pool_ratio >= threshold * kSharePoolCoolingRatio)
    return NodeBurstState::kCooling;
  return NodeBurstState::kIdle;
}

std::string_view cfsOperationName(CfsOperation op) {
  switch (op) {
    case CfsOperation::kScaleUp:
      return "scale up";
    case CfsOperation::kScaleDown:
      return "scale down";
    case CfsOperation::kRemain:
      return "remain";
    case CfsOperation::kReset:
      return "reset";
  }
  return "remain";
}

CfsOperation containerCfsOperation(bool cfs_quota_burst_enabled, bool allowed_by_limiter,
                                   std::optional<double> throttled_ratio) {
  if (!cfs_quota_burst_enabled)
    return CfsOperation::kReset;
  if (!allowed_by_limiter)
    return CfsOperation::kScaleDown;
  if (throttled_ratio && *throttled_ratio > 0)
    return CfsOperation::kScaleUp;
  return CfsOperation::kRemain;
}

CfsOperation cfsOperationForNode(NodeBurstState node, CfsOperation op) {
  if (node == NodeBurstState::kOverload &&
      (op == CfsOperation::kScaleUp || op == CfsOperation::kRemain))
    return CfsOperation::kScaleDown;
  if ((node == NodeBurstState::kCooling || node == NodeBurstState::kUnknown) &&
      op == CfsOperation::kScaleUp)
    return CfsOperation::kRemain;
  return op;
}

std::int64_t targetCfsQuota(std::int64_t current, std::int64_t base, std::int64_t ceiling,
                            CfsOperation op) {
  double target = static_cast<double>(current);
  switch (op) {
    case CfsOperation::kScaleUp:
      target *= kCfsScaleUpStep;
      break;
    case CfsOperation::kScaleDown:
      target *= kCfsScaleDownStep;
      break;
    case CfsOperation::kReset:
      target = static_cast<double>(base);
      break;
    case CfsOperation::kRemain:
      break;
  }
  // Compared as doubles: a scaled quota past int64 must not wrap before it meets the ceiling.
  const std::int64_t top = std::max(base, ceiling);
  if (target >= static_cast<double>(top))
    return top;
  if (target <= static_cast<double>(base))
    return base;
  return static_cast<std::int64_t>(target);
}

}  // namespace koord::roles::koordlet::qosmanager
