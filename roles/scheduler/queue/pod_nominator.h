// Pods that preemption nominated to a node and that wait for their victims to leave: Filter
// counts them on that node so a lower-priority pod cannot take the room (kube-scheduler's
// PodNominator). Keyed by UID, since the nominated node can differ from the pod's status.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "framework/pod_info.h"

namespace koord::roles::scheduler {

/// Not thread-safe: the SchedulingQueue's mutex guards it.
class PodNominator {
 public:
  /// Nominates `pod` to `node`, or to its status.nominatedNodeName when `node` is empty (no-op
  /// when both are empty); any earlier nomination of the same UID is dropped first.
  void add(std::shared_ptr<const PodInfo> pod, const std::string& node);
  void remove(const PodInfo& pod);
  /// Replaces the stored pod. When neither version carries a nominatedNodeName, a nomination
  /// made in memory is kept: the informer's update can arrive before the API write that sets it.
  void update(const PodInfo& old_pod, std::shared_ptr<const PodInfo> new_pod);
  std::vector<std::shared_ptr<const PodInfo>> podsForNode(std::string_view node) const;
  /// The node `uid` is nominated to; empty when none.
  std::string nodeOf(const std::string& uid) const;
  bool empty() const { return node_by_uid_.empty(); }

 private:
  std::unordered_map<std::string, std::vector<std::shared_ptr<const PodInfo>>> by_node_;
  std::unordered_map<std::string, std::string> node_by_uid_;
};

}  // namespace koord::roles::scheduler
