// Koordinator's BatchResource plugin as one pure function: how much kubernetes.io/batch-cpu and
// batch-memory a node offers, from its capacity, its pods and the koordlet's NodeMetric.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "koord/apis/node_metric.h"
#include "koord/apis/slo_config.h"
#include "noderesource/node_view.h"

namespace koord::roles::manager::noderesource {

enum class BatchState : std::uint8_t {
  kCalculated,  // desired holds both resources
  kDegraded,    // NodeMetric missing, never updated or older than degradeTimeMinutes
  kReset,       // colocation disabled for this node
};
std::string_view batchStateName(BatchState state);

/// Koordinator's messages for the two ways the resources are taken away.
inline constexpr std::string_view kResetReason =
    "node colocation is disabled in Config, reason: DisableInConfig";
inline constexpr std::string_view kDegradeReason =
    "degrade node resource because of abnormal nodeMetric, reason: degradedByBatchResource";

/// Every term of the formula, kept for the log line and for tests. Filled only when the state
/// is kCalculated. "HP" is high priority: every priority class but koord-batch and koord-free.
struct BatchTerms {
  CpuMemory capacity;              // status.capacity
  CpuMemory safety_margin;         // capacity * (100 - {cpu,memory}ReclaimThresholdPercent) / 100
  CpuMemory kubelet_reserved;      // max(capacity - allocatable, 0)
  CpuMemory annotation_reserved;   // node.koordinator.sh/reservation; zero when absent
  CpuMemory node_reserved;         // max(kubelet_reserved, annotation_reserved)
  CpuMemory host_app_hp_used;      // host applications above koord-batch
  CpuMemory system_usage;          // NodeMetric systemUsage + host_app_hp_used
  CpuMemory system_used;           // max(system_usage, node_reserved)
  CpuMemory hp_request;            // sum of HP pods' requests
  CpuMemory hp_used;               // HP pods' usage (request without a metric; LSE cpu = request)
  CpuMemory hp_max_used_request;   // sum of max(request, usage) over HP pods with a metric
  CpuMemory dangling_used;         // metrics of HP pods not in the pod list (in hp_used too)
  CpuMemory by_usage;              // max(capacity - margin - system_used - hp_used, 0)
  CpuMemory by_request;            // max(capacity - margin - node_reserved - hp_request, 0)
  CpuMemory by_max_usage_request;  // max(capacity - margin - system_used - hp_max_used_req, 0)
  std::optional<kube::Quantity> cpu_threshold;     // capacity * batchCPUThresholdPercent / 100
  std::optional<kube::Quantity> memory_threshold;  // capacity * batchMemoryThresholdPercent/100
  int hp_pods = 0;
  int hp_pods_without_metric = 0;
  int dangling_pods = 0;
};

struct BatchResult {
  BatchState state = BatchState::kCalculated;
  /// kResetReason or kDegradeReason (with the detail); empty when calculated.
  std::string reason;
  /// What the node's status.capacity and status.allocatable should hold: batch-cpu in integer
  /// milli-cores, batch-memory in whole bytes. Both nullopt when degraded or reset: Koordinator
  /// removes the resources then (it does not write zero).
  BatchValues desired;
  /// Koordinator's formula lines ("batchAllocatable[CPU(Milli-Core)]:25000 = nodeCapacity:...").
  std::string cpu_message;
  std::string memory_message;
  BatchTerms terms;
};

/// Koordinator's isDegradeNeeded on the NodeMetric's age: why it cannot be trusted (missing,
/// without updateTime, or now past updateTime + degradeTimeMinutes); nullopt when it is fresh.
/// The MidResource plugin applies the same rule.
std::optional<std::string> nodeMetricDegradeDetail(const apis::NodeMetric* metric,
                                                   const apis::ColocationStrategy& strategy,
                                                   std::chrono::system_clock::time_point now);

/// The batch resources of `node`. `pods` are the pods bound to it (any phase; only Running and
/// Pending count), `metric` its NodeMetric or nullptr when there is none, `strategy` the node's
/// resolved colocation strategy, `now` the clock that ages the metric.
///
/// As Koordinator: colocation disabled -> kReset; metric missing, without updateTime, or now >
/// updateTime + degradeTimeMinutes -> kDegraded. Otherwise policies: cpu "usage" (default; a
/// "request" cpu policy is treated as usage, as Koordinator does) or "maxUsageRequest"; memory
/// "usage", "request" or "maxUsageRequest"; then capped by batch{CPU,Memory}ThresholdPercent.
/// Left out: the cpu-normalization ratio, thirdPartyAllocations and NUMA zones (NRT).
BatchResult calculateBatchResource(const NodeView& node, std::span<const PodView* const> pods,
                                   const apis::NodeMetric* metric,
                                   const apis::ColocationStrategy& strategy,
                                   std::chrono::system_clock::time_point now);

}  // namespace koord::roles::manager::noderesource
