#include "metricsadvisor/collectors.h"

#include "metricsadvisor/collectors/cpi/cpi_collector_spec.h"
#include "metricsadvisor/collectors/pagecache/page_cache_collector_spec.h"
#include "metricsadvisor/collectors/podthrottled/pod_throttled_collector_spec.h"
#include "metricsadvisor/collectors/psi/psi_collector_spec.h"
#include "metricsadvisor/collectors/resctrl/resctrl_collector_spec.h"

namespace koord::roles::koordlet::metricsadvisor {

std::span<const CollectorSpec> koordletCollectors() {
  // One line per collector, as the table's readers expect; clang-format would pack them.
  // clang-format off
  static const CollectorSpec kCollectors[] = {
      resctrlCollector(),
      psiCollector(),
      podThrottledCollector(),
      pageCacheCollector(),
      cpiCollector(),
  };
  // clang-format on
  return kCollectors;
}

}  // namespace koord::roles::koordlet::metricsadvisor
