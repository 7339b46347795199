#include "plugins/upstream/nodeports/node_ports.h"

#include <algorithm>

#include <fmt/format.h>

#include "plugins/upstream/args_decode.h"

namespace koord::roles::scheduler::upstream {

namespace {

constexpr std::string_view kPreFilterStateKey = "PreFilterNodePorts";
const StateKey kPreFilterState{kPreFilterStateKey};

struct PortsState final : StateData {
  std::vector<HostPort> ports;
  std::unique_ptr<StateData> clone() const override { return std::make_unique<PortsState>(*this); }
};

}  // namespace

bool fitsPorts(const std::vector<HostPort>& ports, const NodeInfo& node) {
  for (const auto& p : ports) {
    // Port 0 asks for no host port; the API keeps only real ones, this guards a hand-made pod.
    if (p.port > 0 && node.used_ports.conflicts(p))
      return false;
  }
  return true;
}

Status NodePorts::preFilter(CycleState& state, const PodInfo& pod) {
  // Without a host port the pod conflicts with nothing: its Filter need not run (later
  // upstream's Skip; 1.20 passed every node).
  if (std::none_of(pod.host_ports.begin(), pod.host_ports.end(),
                   [](const HostPort& p) { return p.port > 0; }))
    return Status::skip();
  auto data = std::make_unique<PortsState>();
  data->ports = pod.host_ports;
  state.write(kPreFilterState, std::move(data));
  return Status::success();
}

Status NodePorts::filter(const CycleState& state, const PodInfo&, const NodeInfo& node) const {
  const auto* s = state.read<PortsState>(kPreFilterState);
  if (s == nullptr)
    return Status::error(
        fmt::format("error reading \"{}\" from cycleState: not found", kPreFilterStateKey));
  if (fitsPorts(s->ports, node))
    return Status::success();
  return Status::unschedulable(std::string(kErrReasonNodePorts));
}

}  // namespace koord::roles::scheduler::upstream
