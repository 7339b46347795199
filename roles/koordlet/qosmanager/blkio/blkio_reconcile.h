// BlkIOReconcile (Koordinator's blkio plugin, gate BlkIOReconcile): block I/O throttles and
// weights of the besteffort tier (beClass) and of the pods that ask in koordinator.sh/blkioQOS,
// and blk-iocost's latency QoS and cost model at the root (cgroupRoot), every
// -reconcile-interval-seconds.
#pragma once

#include <memory>

#include "qosmanager/blkio/blkio_device.h"
#include "qosmanager/blkio/blkio_plan.h"
#include "qosmanager/framework/strategy.h"

namespace koord::roles::koordlet::qosmanager {

/// The strategy; off by default, as in Koordinator.
StrategySpec blkioReconcileStrategy();

/// Where the table's strategy resolves blocks: /dev, -sys-root-dir, -var-lib-kubelet-dir.
BlkIORoots blkioRoots(const KoordletOptions& options);

/// The strategy with a resolver of the caller's (tests, a different dev root).
std::unique_ptr<QoSStrategy> makeBlkIOReconcile(const StrategyContext& context,
                                                BlockResolver resolve);

}  // namespace koord::roles::koordlet::qosmanager
