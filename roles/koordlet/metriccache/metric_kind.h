// What a metric cache series measures: node, system, pod, container, BE and host-application usage
// kinds, named as Koordinator's metric_types.go names its series so logs and metrics line up.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace koord::roles::koordlet::metriccache {

/// CPU kinds hold cores, memory kinds hold bytes. The object key that goes with a kind is empty
/// for node-level kinds (node, sys, BE), a pod UID for pod kinds, a container ID for container
/// kinds and the host application's name for host-application kinds.
enum class MetricKind : std::uint8_t {
  kNodeCPUUsage,
  kNodeMemoryUsage,
  kNodeMemoryWithPageCacheUsage,
  kSystemCPUUsage,
  kSystemMemoryUsage,
  kPodCPUUsage,
  kPodMemoryUsage,
  kPodMemoryWithPageCacheUsage,
  kContainerCPUUsage,
  kContainerMemoryUsage,
  kContainerMemoryWithPageCacheUsage,
  kBECPUUsage,
  kBECPURequest,
  kBECPULimit,
  kHostAppCPUUsage,
  kHostAppMemoryUsage,
  kHostAppMemoryWithPageCacheUsage,
  kPodCPUThrottled,
  kContainerCPUThrottled,
  kContainerCPICycles,
  kContainerCPIInstructions,
  kPodPSICPUSome,
  kPodPSICPUFull,
  kPodPSIMemSome,
  kPodPSIMemFull,
  kPodPSIIOSome,
  kPodPSIIOFull,
  kPodPSICPUFullSupported,
  kContainerPSICPUSome,
  kContainerPSICPUFull,
  kContainerPSIMemSome,
  kContainerPSIMemFull,
  kContainerPSIIOSome,
  kContainerPSIIOFull,
  kContainerPSICPUFullSupported,
  kNodePSICPUSome,
  kNodePSICPUFull,
  kNodePSIMemSome,
  kNodePSIMemFull,
  kNodePSIIOSome,
  kNodePSIIOFull,
  kNodePSICPUFullSupported,
};

inline constexpr std::size_t kMetricKindCount = 42;

/// Every kind, in declaration order.
const std::array<MetricKind, kMetricKindCount>& allMetricKinds();

/// Koordinator's series name, e.g. "node_cpu_usage". Koordinator keeps the three BE kinds in one
/// series "node_be" told apart by labels (be_resource=cpu, be_allocation=usage|request|
/// real-limit); here they are flattened to "node_be_cpu_usage", "node_be_cpu_request" and
/// "node_be_cpu_real_limit". The PSI and CPI series are flattened the same way: Koordinator's
/// container_psi{psi_resource=cpu,psi_precision=avg10,psi_degree=some} is
/// "container_psi_cpu_some_avg10", container_cpi{cpi_resource=cycles} is "container_cpi_cycles".
/// Throttled kinds hold the nr_throttled / nr_periods ratio of the last interval, PSI kinds the
/// avg10 percentage, CPI kinds counts over the last collection window.
std::string_view toString(MetricKind kind);

/// The inverse of toString, for configuration (per-kind retention); nullopt for unknown names.
std::optional<MetricKind> metricKindFromString(std::string_view name);

}  // namespace koord::roles::koordlet::metriccache
