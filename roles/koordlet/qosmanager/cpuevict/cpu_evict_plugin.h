// BECPUEvict as a QoS strategy: QoSEvictors' CPU round every -cpu-evict-interval-seconds, once
// the API server's Eviction version is known.
#pragma once

#include "qosmanager/framework/strategy.h"

namespace koord::roles::koordlet::qosmanager {

StrategySpec cpuEvictStrategy();

}  // namespace koord::roles::koordlet::qosmanager
