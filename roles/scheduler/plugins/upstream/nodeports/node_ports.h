// NodePorts: a pod's hostPorts must be free on the node (same protocol and port, overlapping
// host IP, 0.0.0.0 overlapping all). PreFilter keeps the ports, or Skips a pod without any.
#pragma once

#include <string_view>

#include "framework/plugin.h"

namespace koord::roles::scheduler::upstream {

inline constexpr std::string_view kNodePortsName = "NodePorts";
inline constexpr std::string_view kErrReasonNodePorts =
    "node(s) didn't have free ports for the requested pod ports";

class NodePorts final : public PreFilterPlugin, public FilterPlugin {
 public:
  std::string_view name() const override { return kNodePortsName; }
  Status preFilter(CycleState& state, const PodInfo& pod) override;
  Status filter(const CycleState& state, const PodInfo& pod, const NodeInfo& node) const override;
};

/// Whether none of `ports` conflicts with a port in use on `node`.
bool fitsPorts(const std::vector<HostPort>& ports, const NodeInfo& node);

}  // namespace koord::roles::scheduler::upstream
