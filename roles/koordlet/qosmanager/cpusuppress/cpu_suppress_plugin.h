// BECPUSuppress as a QoS strategy: CPUSuppress's round every -cpu-suppress-interval-seconds,
// holding BE pods to the CPU the NodeSLO threshold leaves them.
#pragma once

#include "qosmanager/framework/strategy.h"

namespace koord::roles::koordlet::qosmanager {

StrategySpec cpuSuppressStrategy();

}  // namespace koord::roles::koordlet::qosmanager
