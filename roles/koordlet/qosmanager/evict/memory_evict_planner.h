// BEMemoryEvict's decision without its I/O: how many bytes of node memory to free once use passes
// the threshold, and which BE pods to evict, in Koordinator's order, to free them.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "koord/kube/error.h"
#include "qosmanager/evict/eviction_strategy.h"

namespace koord::roles::koordlet::qosmanager {

/// The reason Koordinator gives the eviction (EvictReasonPrefix + feature); its message is
/// "<reason>, kill pod: <pod name>".
inline constexpr std::string_view kBEMemoryEvictReason =
    "trigger by koordlet feature BEMemoryEvict";

/// A pod on the node, as BEMemoryEvict sees it.
struct BEMemoryEvictCandidate {
  std::string key;  ///< "namespace/name"
  std::string name;
  std::string uid;
  std::optional<std::int32_t> priority;  ///< spec.priority
  /// The koordinator.sh/qosClass label as written; only "BE" makes a pod a candidate.
  std::string qos_label;
  /// The pod's latest memory use; 0 (or less) when the metric cache has none.
  std::int64_t memory_used_bytes = 0;
  /// isEvictionPolicyAllowed(<koordinator.sh/eviction-policy>, kBEMemoryEvictFeature).
  bool eviction_allowed = true;
};

/// A pod to evict and the bytes Koordinator counts as freed by it (its memory use).
struct BEMemoryEvictVictim {
  std::string key;
  std::string name;
  std::string uid;
  std::int64_t release_bytes = 0;
};

struct BEMemoryEvictPlan {
  /// Bytes to free; 0 means nothing to do (disabled, or use below the threshold).
  std::int64_t release_bytes = 0;
  /// Node memory use in whole percent, truncated as Koordinator does, and the percent eviction
  /// aims for; for the log line.
  std::int64_t usage_percent = 0;
  std::int64_t lower_percent = 0;
  /// Evict in this order: their release_bytes reach release_bytes when every eviction succeeds
  /// (all candidates when they cannot).
  std::vector<BEMemoryEvictVictim> victims;
  /// The remaining candidates, in order. Like Koordinator, an executor whose eviction fails moves
  /// on to the next pod and stops once the pods it evicted (or had already evicted and are still
  /// present) reach release_bytes.
  std::vector<BEMemoryEvictVictim> reserves;
};

/// The node's memory: capacity and the latest used bytes from the metric cache.
struct NodeMemoryUse {
  std::int64_t capacity_bytes = 0;
  std::int64_t used_bytes = 0;
};

/// Koordinator's calculateReleaseByUsedThresholdPercent and getSortedBEPodInfos: when
/// used * 100 / capacity (truncated) reaches the threshold, release
/// capacity * (usage - lower) / 100 bytes by evicting the BE candidates whose eviction policy
/// allows it, ordered by priority (lower first; unset counts as 0), then pods with known use
/// before unknown, larger use first, then name in reverse order, then uid. The strategy is assumed
/// to have passed decodeBEMemoryEvictStrategy's checks. Errors for a capacity <= 0 (Koordinator
/// skips such a node) and for figures whose arithmetic would overflow int64.
kube::Expected<BEMemoryEvictPlan> planBEMemoryEviction(
    const BEMemoryEvictStrategy& strategy, const NodeMemoryUse& node,
    std::span<const BEMemoryEvictCandidate> candidates);

}  // namespace koord::roles::koordlet::qosmanager
