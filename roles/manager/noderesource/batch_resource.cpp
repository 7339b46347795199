#include "noderesource/batch_resource.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include "noderesource/quantity_math.h"

namespace koord::roles::manager::noderesource {
namespace {

using apis::CalculatePolicy;
using apis::PriorityClass;

struct PodKey {
  std::string_view namespace_;
  std::string_view name;
  friend bool operator==(const PodKey&, const PodKey&) = default;
};
struct PodKeyHash {
  std::size_t operator()(const PodKey& k) const noexcept {
    std::size_t h = std::hash<std::string_view>{}(k.namespace_);
    return h ^
           (std::hash<std::string_view>{}(k.name) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2));
  }
};

bool isLowPriority(PriorityClass p) {
  return p == PriorityClass::kBatch || p == PriorityClass::kFree;
}

std::int32_t defaultPriorityValue(PriorityClass p) {
  auto band = apis::priorityBand(p);
  return band ? band->default_value : 0;
}

// The NodeMetric is too old (or absent) to trust: Koordinator's isDegradeNeeded.
std::optional<std::string> degradeDetail(const apis::NodeMetric* metric,
                                         const apis::ColocationStrategy& strategy,
                                         std::chrono::system_clock::time_point now) {
  if (metric == nullptr)
    return std::string("NodeMetric not found");
  if (!metric->update_time)
    return std::string("NodeMetric has no status.updateTime");
  // In microseconds with checked sums: a hostile updateTime or degradeTimeMinutes must not
  // overflow the clock arithmetic. Beyond +/-10^8 minutes (190 years) the answer cannot change.
  constexpr std::int64_t kMaxMinutes = 100'000'000;
  using std::chrono::duration_cast;
  using std::chrono::microseconds;
  std::int64_t minutes = std::clamp(strategy.degrade_time_minutes, -kMaxMinutes, kMaxMinutes);
  std::int64_t updated =
      duration_cast<microseconds>(metric->update_time->time_since_epoch()).count();
  std::int64_t now_us = duration_cast<microseconds>(now.time_since_epoch()).count();
  std::int64_t deadline = 0;
  if (__builtin_add_overflow(updated, minutes * 60'000'000, &deadline))
    return minutes > 0 ? std::nullopt
                       : std::optional<std::string>("NodeMetric updateTime out of range");
  if (now_us > deadline) {
    std::int64_t age = 0;
    if (__builtin_sub_overflow(now_us, updated, &age))
      age = std::numeric_limits<std::int64_t>::max();
    return fmt::format("NodeMetric updated {}s ago, over degradeTimeMinutes {}", age / 1'000'000,
                       strategy.degrade_time_minutes);
  }
  return std::nullopt;
}

std::int64_t gigaOf(const kube::Quantity& q) {
  return q.scaledValue(9);
}

// capacity - margin - a - b, floored at zero.
kube::Quantity remaining(const kube::Quantity& capacity, const kube::Quantity& margin,
                         const kube::Quantity& a, const kube::Quantity& b) {
  kube::Quantity out = capacity;
  subSat(out, margin);
  subSat(out, a);
  subSat(out, b);
  return maxQ(out, kube::Quantity::fromInt(0));
}

void computeCpu(const apis::ColocationStrategy& strategy, BatchTerms& t, kube::Quantity& cpu,
                std::string& message) {
  const bool by_max = strategy.cpu_calculate_policy == CalculatePolicy::kMaxUsageRequest;
  cpu = by_max ? t.by_max_usage_request.cpu : t.by_usage.cpu;
  const kube::Quantity& hp = by_max ? t.hp_max_used_request.cpu : t.hp_used.cpu;
  const std::string_view hp_name = by_max ? "podHPMaxUsedRequest" : "podHPUsed";
  if (!strategy.batch_cpu_threshold_percent) {
    message = fmt::format(
        "batchAllocatable[CPU(Milli-Core)]:{} = nodeCapacity:{} - nodeSafetyMargin:{} - "
        "systemUsageOrNodeReserved:{} - {}:{}",
        cpu.milliValue(), t.capacity.cpu.milliValue(), t.safety_margin.cpu.milliValue(),
        t.system_used.cpu.milliValue(), hp_name, hp.milliValue());
    return;
  }
  double ratio = percentRatio(*strategy.batch_cpu_threshold_percent);
  t.cpu_threshold = multiplyMilli(t.capacity.cpu, ratio);
  // A negative capacity (or ratio) from a hostile status or config makes the threshold negative;
  // an extended resource below zero would be refused by the API server at every sync.
  cpu = maxQ(minQ(cpu, *t.cpu_threshold), kube::Quantity::fromInt(0));
  message = fmt::format(
      "batchAllocatable[CPU(Milli-Core)]:{} = min(nodeCapacity:{} * thresholdRatio:{}, "
      "nodeCapacity:{} - nodeSafetyMargin:{} - systemUsageOrNodeReserved:{} - {}:{})",
      cpu.milliValue(), t.capacity.cpu.milliValue(), ratio, t.capacity.cpu.milliValue(),
      t.safety_margin.cpu.milliValue(), t.system_used.cpu.milliValue(), hp_name, hp.milliValue());
}

void computeMemory(const apis::ColocationStrategy& strategy, BatchTerms& t, kube::Quantity& memory,
                   std::string& message) {
  const kube::Quantity* system = &t.system_used.memory;
  std::string_view system_name = "systemUsage";
  const kube::Quantity* hp = &t.hp_used.memory;
  std::string_view hp_name = "podHPUsed";
  memory = t.by_usage.memory;
  if (strategy.memory_calculate_policy == CalculatePolicy::kRequest) {
    memory = t.by_request.memory;
    system = &t.node_reserved.memory;
    system_name = "nodeReserved";
    hp = &t.hp_request.memory;
    hp_name = "podHPRequest";
  } else if (strategy.memory_calculate_policy == CalculatePolicy::kMaxUsageRequest) {
    memory = t.by_max_usage_request.memory;
    hp = &t.hp_max_used_request.memory;
    hp_name = "podHPMaxUsedRequest";
  }
  if (!strategy.batch_memory_threshold_percent) {
    message = fmt::format(
        "batchAllocatable[Mem(GB)]:{} = nodeCapacity:{} - nodeSafetyMargin:{} - {}:{} - {}:{}",
        gigaOf(memory), gigaOf(t.capacity.memory), gigaOf(t.safety_margin.memory), system_name,
        gigaOf(*system), hp_name, gigaOf(*hp));
    return;
  }
  double ratio = percentRatio(*strategy.batch_memory_threshold_percent);
  t.memory_threshold = multiplyValue(t.capacity.memory, ratio);
  memory = maxQ(minQ(memory, *t.memory_threshold), kube::Quantity::fromInt(0));
  message = fmt::format(
      "batchAllocatable[Mem(GB)]:{} = min(nodeCapacity:{} * thresholdRatio:{}, nodeCapacity:{} - "
      "nodeSafetyMargin:{} - {}:{} - {}:{})",
      gigaOf(memory), gigaOf(t.capacity.memory), ratio, gigaOf(t.capacity.memory),
      gigaOf(t.safety_margin.memory), system_name, gigaOf(*system), hp_name, gigaOf(*hp));
}

}  // namespace

std::optional<std::string> nodeMetricDegradeDetail(const apis::NodeMetric* metric,
                                                   const apis::ColocationStrategy& strategy,
                                                   std::chrono::system_clock::time_point now) {
  return degradeDetail(metric, strategy, now);
}

std::string_view batchStateName(BatchState state) {
  switch (state) {
    case BatchState::kCalculated:
      return "calculated";
    case BatchState::kDegraded:
      return "degraded";
    case BatchState::kReset:
      return "reset";
  }
  return "unknown";
}

BatchResult calculateBatchResource(const NodeView& node, std::span<const PodView* const> pods,
                                   const apis::NodeMetric* metric,
                                   const apis::ColocationStrategy& strategy,
                                   std::chrono::system_clock::time_point now) {
  BatchResult result;
  if (!strategy.enable) {
    result.state = BatchState::kReset;
    result.reason = std::string(kResetReason);
    return result;
  }
  if (auto detail = degradeDetail(metric, strategy, now)) {
    result.state = BatchState::kDegraded;
    result.reason = fmt::format("{} ({})", kDegradeReason, *detail);
    return result;
  }
  BatchTerms& t = result.terms;

  // Pod metrics by namespace/name; a repeated key keeps its last entry, as a Go map would.
  const auto& metrics = metric->pods_metric;
  std::unordered_map<PodKey, std::size_t, PodKeyHash> metric_index;
  metric_index.reserve(metrics.size());
  std::vector<char> dangling(metrics.size(), 0);
  for (std::size_t i = 0; i < metrics.size(); ++i) {
    auto [it, inserted] =
        metric_index.try_emplace(PodKey{metrics[i].namespace_, metrics[i].name}, i);
    if (!inserted) {
      dangling[it->second] = 0;
      it->second = i;
    }
    dangling[i] = 1;
  }

  for (const PodView* pod : pods) {
    if (pod == nullptr || !pod->isActive())
      continue;
    const apis::PodMetricInfo* pod_metric = nullptr;
    if (auto it = metric_index.find(PodKey{pod->namespace_, pod->name}); it != metric_index.end()) {
      pod_metric = &metrics[it->second];
      dangling[it->second] = 0;
    }
    if (isLowPriority(pod->priority))
      continue;
    ++t.hp_pods;
    addSat(t.hp_request, pod->requests);
    if (pod_metric == nullptr) {
      // Koordinator counts the request as usage here and leaves the pod out of
      // hp_max_used_request: a freshly scheduled pod only shows in the maxUsageRequest policy
      // once the koordlet reports it.
      ++t.hp_pods_without_metric;
      addSat(t.hp_used, pod->requests);
      continue;
    }
    CpuMemory used = cpuMemoryOf(pod_metric->pod_usage);
    addSat(t.hp_max_used_request, maxCM(pod->requests, used));
    if (pod->isLSE()) {
      // LSE pods hold their cpus exclusively: what they do not use cannot be reclaimed.
      used.cpu = pod->requests.cpu;
    }
    addSat(t.hp_used, used);
  }

  // Pods the koordlet still reports but the list no longer holds (deleted, terminated, or not
  // yet seen by the informer) count by the priority the metric carries.
  for (std::size_t i = 0; i < metrics.size(); ++i) {
    if (!dangling[i] || isLowPriority(metrics[i].priority))
      continue;
    ++t.dangling_pods;
    addSat(t.dangling_used, cpuMemoryOf(metrics[i].pod_usage));
  }
  addSat(t.hp_used, t.dangling_used);
  addSat(t.hp_max_used_request, t.dangling_used);

  const std::int32_t batch_priority = defaultPriorityValue(PriorityClass::kBatch);
  for (const auto& app : metric->host_application_metric) {
    if (defaultPriorityValue(app.priority) <= batch_priority)
      continue;
    addSat(t.host_app_hp_used, cpuMemoryOf(app.usage));
  }

  t.capacity = cpuMemoryOf(node.capacity);
  t.safety_margin.cpu =
      multiplyMilli(t.capacity.cpu, reserveRatio(strategy.cpu_reclaim_threshold_percent));
  t.safety_margin.memory =
      multiplyValue(t.capacity.memory, reserveRatio(strategy.memory_reclaim_threshold_percent));

  CpuMemory kubelet = t.capacity;
  subSat(kubelet, cpuMemoryOf(node.allocatable));
  t.kubelet_reserved = maxCM(kubelet, CpuMemory{});
  if (node.reservation)
    t.annotation_reserved = cpuMemoryOf(*node.reservation);
  t.node_reserved = maxCM(t.kubelet_reserved, t.annotation_reserved);

  if (metric->node_metric)
    t.system_usage = cpuMemoryOf(metric->node_metric->system_usage);
  addSat(t.system_usage, t.host_app_hp_used);
  t.system_used = maxCM(t.system_usage, t.node_reserved);

  t.by_usage.cpu = remaining(t.capacity.cpu, t.safety_margin.cpu, t.system_used.cpu, t.hp_used.cpu);
  t.by_usage.memory =
      remaining(t.capacity.memory, t.safety_margin.memory, t.system_used.memory, t.hp_used.memory);
  t.by_request.cpu =
      remaining(t.capacity.cpu, t.safety_margin.cpu, t.node_reserved.cpu, t.hp_request.cpu);
  t.by_request.memory = remaining(t.capacity.memory, t.safety_margin.memory, t.node_reserved.memory,
                                  t.hp_request.memory);
  t.by_max_usage_request.cpu =
      remaining(t.capacity.cpu, t.safety_margin.cpu, t.system_used.cpu, t.hp_max_used_request.cpu);
  t.by_max_usage_request.memory = remaining(t.capacity.memory, t.safety_margin.memory,
                                            t.system_used.memory, t.hp_max_used_request.memory);

  kube::Quantity cpu;
  kube::Quantity memory;
  computeCpu(strategy, t, cpu, result.cpu_message);
  computeMemory(strategy, t, memory, result.memory_message);

  // Extended resources must be integers: batch-cpu counts milli-cores, batch-memory whole bytes
  // (rounded up, as Koordinator's q.Set(q.Value()) does).
  result.desired.cpu = kube::Quantity::fromInt(cpu.milliValue());
  result.desired.memory = kube::Quantity::fromInt(memory.value(), memory.format());
  return result;
}

}  // namespace koord::roles::manager::noderesource
