// What a plugin can reach beyond its own arguments: the cycle's snapshot, the profile's filters
// (for preemption's what-if runs) and the cluster's other objects (NodeMetric, PDBs).
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "cycle_state.h"
#include "node_info.h"
#include "pod_info.h"
#include "status.h"

namespace koord::apis {
struct NodeMetric;
}

namespace koord::roles::scheduler {

class Snapshot;

/// A PodDisruptionBudget as preemption reads it.
struct DisruptionBudget {
  std::string namespace_;
  std::string name;
  kube::Selector selector;
  std::int32_t disruptions_allowed = 0;
};

/// Objects other than pods and nodes, from the scheduler's informers (or a test's fixture).
class ClusterView {
 public:
  virtual ~ClusterView() = default;
  /// The node's NodeMetric; null when there is none.
  virtual std::shared_ptr<const apis::NodeMetric> nodeMetric(std::string_view node) const = 0;
  virtual std::vector<DisruptionBudget> disruptionBudgets(std::string_view namespace_) const = 0;
};

class FrameworkHandle {
 public:
  virtual ~FrameworkHandle() = default;
  /// The snapshot of the cycle in progress.
  virtual const Snapshot& snapshot() const = 0;
  virtual const ClusterView& cluster() const = 0;
  /// Every Filter plugin of the profile on one node (preemption's check after removing victims).
  virtual Status runFilterPlugins(const CycleState& state, const PodInfo& pod,
                                  const NodeInfo& node) const = 0;
  virtual Status runPreFilterAddPod(CycleState& state, const PodInfo& pod_to_schedule,
                                    const PodInfo& pod_to_add, const NodeInfo& node) const = 0;
  virtual Status runPreFilterRemovePod(CycleState& state, const PodInfo& pod_to_schedule,
                                       const PodInfo& pod_to_remove,
                                       const NodeInfo& node) const = 0;
};

}  // namespace koord::roles::scheduler
