// What the community nodeutilization plugins share: node usage as the sum of its pods' requests,
// and moving pods from source nodes while the target nodes' headroom lasts.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "framework/plugin.h"
#include "plugins/lownodeload/utilization.h"

namespace koord::roles::descheduler::nodeutilization {

struct NodeInfo {
  const Node* node = nullptr;
  std::vector<const Pod*> pods;
  /// Requests summed per resource of the thresholds; "pods" is the pod count.
  ResourceAmounts usage;
  utilization::NodeThresholds thresholds;
};

/// Usage and thresholds for `nodes` over the resources `low` names (`high` names the same).
std::vector<NodeInfo> nodeInfos(const Snapshot& snapshot, const std::vector<const Node*>& nodes,
                                const utilization::Thresholds& low,
                                const utilization::Thresholds& high, bool deviation);

/// Sum of a node's usage amounts, what upstream orders nodes by.
std::int64_t usageSum(const NodeInfo& n);

struct EvictionPlan {
  std::string_view plugin_name;
  const std::optional<utilization::Namespaces>* namespaces;
  /// Whether to go on evicting from `source` with `available` headroom left on the targets.
  std::function<bool(const NodeInfo& source, const ResourceAmounts& available)> keep_going;
  /// The eviction reason for a pod of `source`.
  std::function<std::string(const NodeInfo& source)> reason;
};

/// Evicts from each source in order its removable pods (lowest priority, then QoS, first), taking
/// each one's requests off the source's usage and the targets' headroom.
void evictFromSources(FrameworkHandle& handle, std::vector<NodeInfo*>& sources,
                      const std::vector<NodeInfo*>& targets, const EvictionPlan& plan);

}  // namespace koord::roles::descheduler::nodeutilization
