// CPUBurst as a QoS strategy (gate CPUBurst, on by default): CPUBurst's round every
// -reconcile-interval-seconds, as Koordinator runs its cpuburst plugin.
#pragma once

#include "qosmanager/framework/strategy.h"

namespace koord::roles::koordlet::qosmanager {

StrategySpec cpuBurstStrategy();

}  // namespace koord::roles::koordlet::qosmanager
