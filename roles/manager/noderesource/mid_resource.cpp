#include "noderesource/mid_resource.h"

#include <boost/json.hpp>

#include <fmt/format.h>

#include "koord/apis/extension.h"
#include "noderesource/quantity_math.h"

namespace koord::roles::manager::noderesource {

namespace json = boost::json;

MidResult calculateMidResource(const NodeView& node, const apis::NodeMetric* metric,
                               const apis::ColocationStrategy& strategy,
                               std::chrono::system_clock::time_point now) {
  MidResult result;
  if (!strategy.enable) {
    result.state = BatchState::kReset;
    result.reason = std::string(kResetReason);
    return result;
  }
  auto detail = nodeMetricDegradeDetail(metric, strategy, now);
  if (!detail && !metric->prod_reclaimable)
    detail = "NodeMetric has no prodReclaimableMetric";
  if (!detail && node.allocatable.empty())
    detail = "node has no status.allocatable";
  if (detail) {
    result.state = BatchState::kDegraded;
    result.reason = fmt::format("{} ({})", kMidDegradeReason, *detail);
    return result;
  }

  const CpuMemory reclaimable = cpuMemoryOf(*metric->prod_reclaimable);
  const CpuMemory allocatable = cpuMemoryOf(node.allocatable);

  const double cpu_ratio = percentRatio(strategy.mid_cpu_threshold_percent);
  std::int64_t cpu = reclaimable.cpu.milliValue();
  const std::int64_t max_cpu =
      truncToInt64(static_cast<double>(allocatable.cpu.milliValue()) * cpu_ratio);
  cpu = std::max<std::int64_t>(std::min(cpu, max_cpu), 0);

  const double memory_ratio = percentRatio(strategy.mid_memory_threshold_percent);
  std::int64_t memory = reclaimable.memory.value();
  const std::int64_t max_memory =
      truncToInt64(static_cast<double>(allocatable.memory.value()) * memory_ratio);
  memory = std::max<std::int64_t>(std::min(memory, max_memory), 0);

  result.desired.cpu = kube::Quantity::fromInt(cpu);
  result.desired.memory = kube::Quantity::fromInt(memory, kube::Quantity::Format::kBinarySI);
  result.cpu_message = fmt::format(
      "midAllocatable[CPU(milli-core)]:{} = min(nodeAllocatable:{} * thresholdRatio:{}, "
      "ProdReclaimable:{})",
      cpu, allocatable.cpu.milliValue(), cpu_ratio, reclaimable.cpu.milliValue());
  result.memory_message = fmt::format(
      "midAllocatable[Memory(byte)]:{} = min(nodeAllocatable:{} * thresholdRatio:{}, "
      "ProdReclaimable:{})",
      result.desired.memory->toString(), allocatable.memory.toString(), memory_ratio,
      reclaimable.memory.toString());
  return result;
}

SyncDecision needMidSync(const BatchValues& current, const BatchValues& desired,
                         const apis::ColocationStrategy& strategy) {
  if (isResourceDiff(current.cpu, desired.cpu, strategy.resource_diff_threshold))
    return {true,
            fmt::format("{} diff bigger than {}", apis::kMidCPU, strategy.resource_diff_threshold)};
  if (isResourceDiff(current.memory, desired.memory, strategy.resource_diff_threshold))
    return {true, fmt::format("{} diff bigger than {}", apis::kMidMemory,
                              strategy.resource_diff_threshold)};
  return {};
}

void addMidResourcesToPatch(json::value& status_patch, const BatchValues& mid) {
  auto entry = [](const std::optional<kube::Quantity>& q) -> json::value {
    if (!q)
      return nullptr;
    return json::value(q->toString());
  };
  if (!status_patch.is_object())
    status_patch.emplace_object();
  json::value& status = status_patch.as_object()["status"];
  if (!status.is_object())
    status.emplace_object();
  for (const char* section : {"capacity", "allocatable"}) {
    json::value& target = status.as_object()[section];
    if (!target.is_object())
      target.emplace_object();
    json::object& resources = target.as_object();
    resources[apis::kMidCPU] = entry(mid.cpu);
    resources[apis::kMidMemory] = entry(mid.memory);
  }
}

}  // namespace koord::roles::manager::noderesource
