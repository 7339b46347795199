// Koordinator's MidResource noderesource plugin (v1.5) as pure functions: kubernetes.io/mid-cpu
// and mid-memory from the koordlet's prod reclaimable prediction, capped by node allocatable.
#pragma once

#include <boost/json/fwd.hpp>

#include <chrono>
#include <string>
#include <string_view>

#include "koord/apis/node_metric.h"
#include "koord/apis/slo_config.h"
#include "noderesource/batch_resource.h"
#include "noderesource/need_sync.h"
#include "noderesource/node_view.h"

namespace koord::roles::manager::noderesource {

inline constexpr std::string_view kMidResourcePlugin = "MidResource";

/// Koordinator's message when the NodeMetric cannot be used.
inline constexpr std::string_view kMidDegradeReason =
    "degrade node Mid resource because of abnormal nodeMetric, reason: degradedByMidResource";

struct MidResult {
  BatchState state = BatchState::kCalculated;
  /// kResetReason or kMidDegradeReason with the detail; empty when calculated.
  std::string reason;
  /// mid-cpu in integer milli-cores, mid-memory in bytes; both nullopt (removed) when degraded
  /// or reset.
  BatchValues desired;
  /// Koordinator's formula lines ("midAllocatable[CPU(milli-core)]:2000 = min(...)").
  std::string cpu_message;
  std::string memory_message;
};

/// The mid resources of `node` from its NodeMetric (nullptr: none), as Koordinator v1.5:
/// - colocation disabled: kReset (removed);
/// - NodeMetric missing, without updateTime, without status.prodReclaimableMetric.resource
///   .resources, or older than degradeTimeMinutes: kDegraded (removed); a node without
///   status.allocatable too (Koordinator's plugin fails then, which removes them as well);
/// - otherwise mid-cpu = max(min(prodReclaimable cpu, allocatable cpu * midCPUThresholdPercent
///   / 100), 0) in milli-cores, and the same for memory in bytes with
///   midMemoryThresholdPercent.
/// midUnallocatedPercent and the midReclaimMode / midStatic* settings came after v1.5 and have
/// no effect here.
MidResult calculateMidResource(const NodeView& node, const apis::NodeMetric* metric,
                               const apis::ColocationStrategy& strategy,
                               std::chrono::system_clock::time_point now);

/// Koordinator's MidResource NeedSync: mid-cpu, then mid-memory, moved past
/// resourceDiffThreshold, appeared or gone.
SyncDecision needMidSync(const BatchValues& current, const BatchValues& desired,
                         const apis::ColocationStrategy& strategy);

/// Adds mid-cpu and mid-memory to a status merge patch from buildNodeStatusPatch (capacity and
/// allocatable; nullopt becomes null, which removes the resource).
void addMidResourcesToPatch(boost::json::value& status_patch, const BatchValues& mid);

}  // namespace koord::roles::manager::noderesource
