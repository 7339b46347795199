// CgroupReconcile (Koordinator's cgreconcile, gate CgroupReconcile): the memory QoS of each
// class's pods, from the NodeSLO's resourceQOSStrategy.<class>.memoryQOS and the pods'
// koordinator.sh/memoryQOS, written to their tier, pod and container cgroups every
// -reconcile-interval-seconds.
#pragma once

#include "qosmanager/framework/strategy.h"

namespace koord::roles::koordlet::qosmanager {

/// The strategy; off by default, as in Koordinator.
StrategySpec cgroupReconcileStrategy();

}  // namespace koord::roles::koordlet::qosmanager
