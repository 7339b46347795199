#include "qosmanager/strategies.h"

#include "qosmanager/blkio/blkio_reconcile.h"
#include "qosmanager/cgreconcile/cgroup_reconcile.h"
#include "qosmanager/cpuburst/cpu_burst_plugin.h"
#include "qosmanager/cpuevict/cpu_evict_plugin.h"
#include "qosmanager/cpusuppress/cpu_suppress_plugin.h"
#include "qosmanager/memoryevict/memory_evict_plugin.h"
#include "qosmanager/priorityevict/priority_evict_round.h"
#include "qosmanager/resctrl/resctrl_reconcile.h"
#include "qosmanager/sysreconcile/system_config_reconcile.h"

namespace koord::roles::koordlet::qosmanager {

std::span<const StrategySpec> koordletStrategies() {
  // One line per strategy, as the table's readers expect; clang-format would pack them.
  // clang-format off
  static const StrategySpec kStrategies[] = {
      cpuSuppressStrategy(),
      memoryEvictStrategy(),
      cpuEvictStrategy(),
      memoryUsedEvictStrategy(),
      cpuUsedEvictStrategy(),
      resctrlStrategy(),
      systemConfigStrategy(),
      cpuBurstStrategy(),
      cgroupReconcileStrategy(),
      blkioReconcileStrategy(),
  };
  // clang-format on
  return kStrategies;
}

}  // namespace koord::roles::koordlet::qosmanager
