// BECPUEvict's decision without its I/O: how much batch-cpu request to release when BE pods get
// too little of what they asked for and use nearly all of it, and which BE pods to evict for it.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "qosmanager/evict/eviction_strategy.h"

namespace koord::roles::koordlet::qosmanager {

/// The reason Koordinator gives the eviction (EvictReasonPrefix + feature); its message is
/// "<reason>, kill pod: <pod name>".
inline constexpr std::string_view kBECPUEvictReason = "trigger by koordlet feature BECPUEvict";

/// Koordinator's defaultMinAllocatableBatchMilliCPU: a zero batch-cpu allocatable still lets the
/// satisfaction be computed, against this.
inline constexpr double kMinAllocatableBatchMilliCPU = 1;

/// One of the node's BE CPU series (NodeBEMetric: usage, request or realLimit) as the metric cache
/// answered a query: the aggregate in milli-cores and how many samples it covered. A failed query
/// is {0, 0}, as Koordinator reads it.
struct BECPUSeries {
  double milli = 0;
  std::int64_t samples = 0;
};

/// The three series over one query range.
struct BECPUAllocation {
  BECPUSeries usage;
  BECPUSeries request;
  BECPUSeries real_limit;
};

/// A pod on the node, as BECPUEvict sees it.
struct BECPUEvictCandidate {
  std::string key;  ///< "namespace/name"
  std::string name;
  std::string uid;
  std::optional<std::int32_t> priority;  ///< spec.priority
  /// The koordinator.sh/qosClass label as written; only "BE" makes a pod a candidate.
  std::string qos_label;
  /// The pod's latest CPU use; 0 when the metric cache has none.
  std::int64_t cpu_used_milli = 0;
  /// The sum of its containers' and sidecar init containers' positive kubernetes.io/batch-cpu
  /// requests: what evicting it releases.
  std::int64_t batch_cpu_request_milli = 0;
  /// isEvictionPolicyAllowed(<koordinator.sh/eviction-policy>, kBECPUEvictFeature).
  bool eviction_allowed = true;
};

struct BECPUEvictInput {
  /// Averages over the window (Koordinator's GenerateQueryParamsAvg(window)).
  BECPUAllocation window_average;
  /// Latest values (GenerateQueryParamsLast(2 * collect interval)); their sample counts are not
  /// read.
  BECPUAllocation latest;
  /// The metric collect interval in whole seconds (truncated, as Koordinator does).
  std::int64_t collect_interval_seconds = 1;
  /// The window the averages were queried over: beCPUEvictWindowSeconds(strategy, interval).
  std::int64_t window_seconds = 1;
  /// The node's allocatable kubernetes.io/batch-cpu (milli-cores); unset when it has none.
  std::optional<std::int64_t> batch_cpu_allocatable_milli;
};

/// How far the plan got, for the log line.
enum class BECPUEvictOutcome : std::uint8_t {
  kDisabled,
  kTooFewSamples,     ///< fewer samples than a third of the window needs
  kAverageUsageLow,   ///< BE pods use less than the usage threshold of their limit on average
  kAverageSatisfied,  ///< the average satisfaction leaves nothing to release
  kLatestUsageLow,    ///< the latest usage is below the threshold
  kLatestSatisfied,   ///< the latest satisfaction leaves nothing to release
  kEvict,
};
std::string_view beCPUEvictOutcomeName(BECPUEvictOutcome o);

/// A pod to evict and the batch-cpu request Koordinator counts as released by it.
struct BECPUEvictVictim {
  std::string key;
  std::string name;
  std::string uid;
  std::int64_t release_milli = 0;
};

struct BECPUEvictPlan {
  BECPUEvictOutcome outcome = BECPUEvictOutcome::kDisabled;
  /// Batch-cpu request to release, in milli-cores; > 0 exactly when outcome is kEvict.
  std::int64_t release_milli = 0;
  /// Evict in this order: their release_milli reach release_milli when every eviction succeeds
  /// (all candidates when they cannot).
  std::vector<BECPUEvictVictim> victims;
  /// The remaining candidates, in order. Like Koordinator, an executor whose eviction fails moves
  /// on to the next pod and stops once the pods it evicted (or had already evicted and are still
  /// present) reach release_milli.
  std::vector<BECPUEvictVictim> reserves;
};

/// The window Koordinator averages over: cpuEvictTimeWindowSeconds when it is longer than the
/// collect interval, else the interval.
std::int64_t beCPUEvictWindowSeconds(const BECPUEvictStrategy& strategy,
                                     std::int64_t collect_interval_seconds);

/// Koordinator's calculateMilliReleaseByBESatisfaction and getBEPodEvictInfoAndSort. The limit is
/// the real limit, or under evictByAllocatable the batch-cpu allocatable (a zero one counts as
/// kMinAllocatableBatchMilliCPU, a missing one as none, which never evicts). With enough samples
/// (samples * interval >= window / 3, the fewest of the three series), average and latest usage
/// both at least usage_threshold_percent of the limit (always, for a limit under one core), and
/// satisfaction = limit / request at most the lower percent, the release is
/// request * (upper% - satisfaction), truncated, the smaller of the average's and latest's. The
/// victims are the BE candidates whose eviction policy allows it, ordered by priority (lower
/// first; unset counts as 0), then CPU use / batch-cpu request (higher first; 0 without a
/// request), then name in reverse order, then uid. A strategy with enable true is assumed to have
/// passed decodeBECPUEvictStrategy's checks.
BECPUEvictPlan planBECPUEviction(const BECPUEvictStrategy& strategy, const BECPUEvictInput& input,
                                 std::span<const BECPUEvictCandidate> candidates);

}  // namespace koord::roles::koordlet::qosmanager
