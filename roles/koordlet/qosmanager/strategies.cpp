#include "qosmanager/strategies.h"

#include "qosmanager/cpuevict/cpu_evict_plugin.h"
#include "qosmanager/cpusuppress/cpu_suppress_plugin.h"
#include "qosmanager/memoryevict/memory_evict_plugin.h"

namespace koord::roles::koordlet::qosmanager {

std::span<const StrategySpec> koordletStrategies() {
  static const StrategySpec kStrategies[] = {
      cpuSuppressStrategy(),
      memoryEvictStrategy(),
      cpuEvictStrategy(),
  };
  return kStrategies;
}

}  // namespace koord::roles::koordlet::qosmanager
