// NodeUnschedulable: keeps pods off cordoned nodes (spec.unschedulable) unless they tolerate
// the node.kubernetes.io/unschedulable:NoSchedule taint, as kube-scheduler 1.20 does.
#pragma once

#include <string_view>

#include "framework/plugin.h"

namespace koord::roles::scheduler::upstream {

inline constexpr std::string_view kNodeUnschedulableName = "NodeUnschedulable";
inline constexpr std::string_view kTaintNodeUnschedulable = "node.kubernetes.io/unschedulable";
inline constexpr std::string_view kErrReasonUnschedulable = "node(s) were unschedulable";
inline constexpr std::string_view kErrReasonUnknownCondition = "node(s) had unknown conditions";

class NodeUnschedulable final : public FilterPlugin {
 public:
  std::string_view name() const override { return kNodeUnschedulableName; }
  Status filter(const CycleState& state, const PodInfo& pod, const NodeInfo& node) const override;
};

}  // namespace koord::roles::scheduler::upstream
