// A node's measured usage as LowNodeLoad reads it from NodeMetric: the system's plus every pod's,
// the prod pods' apart, each pod's own, and the node's thresholds for the pass.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "framework/types.h"
#include "plugins/lownodeload/args.h"
#include "plugins/lownodeload/utilization.h"

namespace koord::roles::descheduler::lownodeload {

struct NodeUsage {
  const Node* node = nullptr;
  /// Pods bound to the node that have not finished, and those of them that are prod.
  std::vector<const Pod*> pods, prod_pods;
  /// Usage per threshold resource, plus "pods" as the pod count.
  ResourceAmounts usage, prod_usage;
  /// Each reported pod's usage by namespace/name.
  std::map<std::string, ResourceAmounts, std::less<>> pod_usage;
  utilization::NodeThresholds thresholds, prod_thresholds;
  /// What the node's pods leave free (node_fit's freeOn), computed the first time nodeFit asks:
  /// a pass asks for the same target once per candidate pod.
  std::optional<ResourceAmounts> free;
};

/// The four threshold sets of a pool over the same resources: every resource any of them names,
/// and memory. A resource one leaves out is 100% (0 in deviation mode, where it means no bound).
struct PoolThresholds {
  std::vector<std::string> names;
  Thresholds low, high, prod_low, prod_high;
};
PoolThresholds poolThresholds(const NodePool& pool);

/// The node's usage from its NodeMetric; nullopt when there is none, it carries no node metric,
/// or its update time is missing or `expiration_seconds` or more before `snapshot.now`.
std::optional<NodeUsage> nodeUsage(const Snapshot& snapshot, const Node& node,
                                   const std::vector<std::string>& names,
                                   std::int64_t expiration_seconds);

/// Fills each usage's thresholds (node and prod) from `t`, averaging over `usages` in deviation
/// mode.
void setThresholds(std::vector<NodeUsage>& usages, const PoolThresholds& t, bool deviation);

}  // namespace koord::roles::descheduler::lownodeload
