#include "metriccache/metric_kind.h"

namespace koord::roles::koordlet::metriccache {
namespace {

struct KindName {
  MetricKind kind;
  std::string_view name;
};

// Indexed by the enum's value; the static_assert below keeps the table and the enum in step.
constexpr std::array<KindName, kMetricKindCount> kKindNames{{
    {MetricKind::kNodeCPUUsage, "node_cpu_usage"},
    {MetricKind::kNodeMemoryUsage, "node_memory_usage"},
    {MetricKind::kNodeMemoryWithPageCacheUsage, "node_memory_usage_with_page_cache"},
    {MetricKind::kSystemCPUUsage, "sys_cpu_usage"},
    {MetricKind::kSystemMemoryUsage, "sys_memory_usage"},
    {MetricKind::kPodCPUUsage, "pod_cpu_usage"},
    {MetricKind::kPodMemoryUsage, "pod_memory_usage"},
    {MetricKind::kPodMemoryWithPageCacheUsage, "pod_memory_usage_with_page_cache"},
    {MetricKind::kContainerCPUUsage, "container_cpu_usage"},
    {MetricKind::kContainerMemoryUsage, "container_memory_usage"},
    {MetricKind::kContainerMemoryWithPageCacheUsage, "container_memory_usage_with_page_cache"},
    {MetricKind::kBECPUUsage, "node_be_cpu_usage"},
    {MetricKind::kBECPURequest, "node_be_cpu_request"},
    {MetricKind::kBECPULimit, "node_be_cpu_real_limit"},
    {MetricKind::kHostAppCPUUsage, "host_application_cpu_usage"},
    {MetricKind::kHostAppMemoryUsage, "host_application_memory_usage"},
    {MetricKind::kHostAppMemoryWithPageCacheUsage, "host_application_memory_usage_with_page_cache"},
    {MetricKind::kPodCPUThrottled, "pod_cpu_throttled"},
    {MetricKind::kContainerCPUThrottled, "container_cpu_throttled"},
    {MetricKind::kContainerCPICycles, "container_cpi_cycles"},
    {MetricKind::kContainerCPIInstructions, "container_cpi_instructions"},
    {MetricKind::kPodPSICPUSome, "pod_psi_cpu_some_avg10"},
    {MetricKind::kPodPSICPUFull, "pod_psi_cpu_full_avg10"},
    {MetricKind::kPodPSIMemSome, "pod_psi_mem_some_avg10"},
    {MetricKind::kPodPSIMemFull, "pod_psi_mem_full_avg10"},
    {MetricKind::kPodPSIIOSome, "pod_psi_io_some_avg10"},
    {MetricKind::kPodPSIIOFull, "pod_psi_io_full_avg10"},
    {MetricKind::kPodPSICPUFullSupported, "pod_psi_cpu_full_supported"},
    {MetricKind::kContainerPSICPUSome, "container_psi_cpu_some_avg10"},
    {MetricKind::kContainerPSICPUFull, "container_psi_cpu_full_avg10"},
    {MetricKind::kContainerPSIMemSome, "container_psi_mem_some_avg10"},
    {MetricKind::kContainerPSIMemFull, "container_psi_mem_full_avg10"},
    {MetricKind::kContainerPSIIOSome, "container_psi_io_some_avg10"},
    {MetricKind::kContainerPSIIOFull, "container_psi_io_full_avg10"},
    {MetricKind::kContainerPSICPUFullSupported, "container_psi_cpu_full_supported"},
    {MetricKind::kNodePSICPUSome, "node_psi_cpu_some_avg10"},
    {MetricKind::kNodePSICPUFull, "node_psi_cpu_full_avg10"},
    {MetricKind::kNodePSIMemSome, "node_psi_mem_some_avg10"},
    {MetricKind::kNodePSIMemFull, "node_psi_mem_full_avg10"},
    {MetricKind::kNodePSIIOSome, "node_psi_io_some_avg10"},
    {MetricKind::kNodePSIIOFull, "node_psi_io_full_avg10"},
    {MetricKind::kNodePSICPUFullSupported, "node_psi_cpu_full_supported"},
}};

constexpr bool tableMatchesEnum() {
  for (std::size_t i = 0; i < kKindNames.size(); ++i) {
    if (static_cast<std::size_t>(kKindNames[i].kind) != i) {
      return false;
    }
  }
  return static_cast<std::size_t>(MetricKind::kNodePSICPUFullSupported) + 1 == kMetricKindCount;
}
static_assert(tableMatchesEnum(), "kKindNames must list every MetricKind in enum order");

}  // namespace

const std::array<MetricKind, kMetricKindCount>& allMetricKinds() {
  static const std::array<MetricKind, kMetricKindCount> kinds = [] {
    std::array<MetricKind, kMetricKindCount> out{};
    for (std::size_t i = 0; i < kKindNames.size(); ++i) {
      out[i] = kKindNames[i].kind;
    }
    return out;
  }();
  return kinds;
}

std::string_view toString(MetricKind kind) {
  const auto index = static_cast<std::size_t>(kind);
  return index < kKindNames.size() ? kKindNames[index].name : std::string_view("unknown");
}

std::optional<MetricKind> metricKindFromString(std::string_view name) {
  for (const auto& entry : kKindNames) {
    if (entry.name == name) {
      return entry.kind;
    }
  }
  return std::nullopt;
}

}  // namespace koord::roles::koordlet::metriccache
