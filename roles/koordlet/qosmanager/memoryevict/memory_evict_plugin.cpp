#include "qosmanager/memoryevict/memory_evict_plugin.h"

#include "koordlet_options.h"
#include "qosmanager/qos_evictors.h"

namespace koord::roles::koordlet::qosmanager {

StrategySpec memoryEvictStrategy() {
  return {
      .name = "memory evict",
      .gate = "BEMemoryEvict",
      .interval = [](const KoordletOptions& o) -> std::chrono::milliseconds {
        return std::chrono::seconds(o.memory_evict_interval_seconds);
      },
      .make = [](const StrategyContext& c) -> std::unique_ptr<QoSStrategy> {
        return std::make_unique<EvictionRoundStrategy>(c, &QoSEvictors::memoryEvictOnce);
      },
  };
}

}  // namespace koord::roles::koordlet::qosmanager
