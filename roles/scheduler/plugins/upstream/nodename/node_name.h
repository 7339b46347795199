// NodeName: a pod that names its node (spec.nodeName) fits only that node; kube-scheduler 1.20's
// filter, failing as UnschedulableAndUnresolvable since preemption cannot change the name.
#pragma once

#include <string_view>

#include "framework/plugin.h"

namespace koord::roles::scheduler::upstream {

inline constexpr std::string_view kNodeNameName = "NodeName";
inline constexpr std::string_view kErrReasonNodeName =
    "node(s) didn't match the requested node name";

class NodeName final : public FilterPlugin {
 public:
  std::string_view name() const override { return kNodeNameName; }
  Status filter(const CycleState& state, const PodInfo& pod, const NodeInfo& node) const override;
};

}  // namespace koord::roles::scheduler::upstream
