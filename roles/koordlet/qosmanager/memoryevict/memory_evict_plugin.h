// BEMemoryEvict as a QoS strategy: QoSEvictors' memory round every
// -memory-evict-interval-seconds, once the API server's Eviction version is known.
#pragma once

#include "qosmanager/framework/strategy.h"

namespace koord::roles::koordlet::qosmanager {

StrategySpec memoryEvictStrategy();

}  // namespace koord::roles::koordlet::qosmanager
