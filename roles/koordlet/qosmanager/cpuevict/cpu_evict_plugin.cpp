#include "qosmanager/cpuevict/cpu_evict_plugin.h"

#include "koordlet_options.h"
#include "qosmanager/qos_evictors.h"

namespace koord::roles::koordlet::qosmanager {

StrategySpec cpuEvictStrategy() {
  return {
      .name = "cpu evict",
      .gate = "BECPUEvict",
      .interval = [](const KoordletOptions& o) -> std::chrono::milliseconds {
        return std::chrono::seconds(o.cpu_evict_interval_seconds);
      },
      .make = [](const StrategyContext& c) -> std::unique_ptr<QoSStrategy> {
        return std::make_unique<EvictionRoundStrategy>(c, &QoSEvictors::cpuEvictOnce);
      },
  };
}

}  // namespace koord::roles::koordlet::qosmanager
