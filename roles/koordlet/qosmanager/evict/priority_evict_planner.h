// CPUEvict's and MemoryEvict's decision without its I/O: how much node CPU or memory to free once
// usage passes the threshold, and which pods up to the priority threshold to evict for it, in
// Koordinator's order (eviction-priority, priority, koordinator.sh/priority label, usage).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "koord/kube/error.h"
#include "qosmanager/evict/used_threshold_strategy.h"

namespace koord::roles::koordlet::qosmanager {

/// A running pod, as CPUEvict and MemoryEvict see it.
struct PriorityEvictCandidate {
  std::string key;  ///< "namespace/name"
  std::string uid;
  /// Koordinator's GetPodPriorityValueWithDefault: a non-zero spec.priority, else the default
  /// value of the pod's priority class (0 without one).
  std::int32_t priority = 0;
  /// koordinator.sh/eviction-priority; 0 when unset (or malformed, which the caller logs).
  std::int32_t eviction_priority = 0;
  /// The koordinator.sh/priority label; the priority when unset or not an integer.
  std::int64_t label_priority = 0;
  /// Latest use: milli-cores for CPU, bytes for memory; nullopt without a recent sample (such a
  /// pod is not a candidate: Koordinator filters pods without metrics).
  std::optional<std::int64_t> used;
  /// The koordinator.sh/eviction-enabled label is "true": only such pods are evicted.
  bool eviction_enabled = false;
  /// isEvictionPolicyAllowed(<koordinator.sh/eviction-policy>, feature).
  bool policy_allowed = true;
  /// Evicted by this koordlet a moment ago and still present: counted as releasing its use, not
  /// evicted again (so no extra victims are taken for the same pressure).
  bool already_evicted = false;
};

struct PriorityEvictPlan {
  /// To free (milli-cores or bytes); 0 means nothing to do (usage below the threshold).
  std::int64_t release = 0;
  /// Node usage in whole percent (truncated as Koordinator does) and the percent aimed for.
  std::int64_t usage_percent = 0;
  std::int64_t lower_percent = 0;
  /// Keys of the pods to evict now, in order; with the already-evicted ones ahead of them their
  /// use reaches `release` (or they are every candidate there is).
  std::vector<std::string> victims;
  /// Keys of the remaining candidates in order, for an executor whose eviction fails.
  std::vector<std::string> reserves;
  /// What the already-evicted candidates count towards `release`.
  std::int64_t pending = 0;
};

/// The node's capacity (milli-cores or bytes) and its usage in the same unit.
struct NodeUse {
  std::int64_t capacity = 0;
  std::int64_t used = 0;
};

/// Koordinator's calculateMilliReleaseByUsedThresholdPercent / calculateReleaseByUsedThreshold-
/// Percent and getPodEvictInfoAndSortByPriority: when used * 100 / capacity (truncated) reaches
/// the threshold, release capacity * (usage - lower) / 100 by evicting candidates with a metric,
/// eviction enabled, policy allowing it and priority <= the priority threshold, ordered by
/// eviction priority, priority, label priority (ascending each), then larger use first, then key.
/// `strategy` must have passed usedThresholdConfigProblem. Errors for a capacity <= 0 and for
/// figures whose arithmetic would overflow.
kube::Expected<PriorityEvictPlan> planPriorityEviction(
    const UsedThresholdEvictStrategy& strategy, const NodeUse& node,
    std::span<const PriorityEvictCandidate> candidates);

}  // namespace koord::roles::koordlet::qosmanager
