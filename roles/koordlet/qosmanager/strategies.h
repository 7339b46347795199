// The koordlet's QoS strategies, one line each: what the QoS manager builds where the gate is
// on. A new strategy is its folder and one line in strategies.cpp.
#pragma once

#include <span>

#include "qosmanager/framework/strategy.h"

namespace koord::roles::koordlet::qosmanager {

/// In the order their loops start.
std::span<const StrategySpec> koordletStrategies();

}  // namespace koord::roles::koordlet::qosmanager
