// The node.koordinator.sh/reservation annotation as the koordlet reads it: CPU an operator keeps
// away from pods (resources.cpu) and the CPUs it pins away (reservedCPUs).
#pragma once

#include <cstdint>
#include <vector>

#include "statesinformer/node_info.h"

namespace koord::roles::koordlet {

/// Koordinator's node reserved CPU: the largest of the kubelet's (capacity - allocatable), the
/// annotation's resources.cpu and its reservedCPUs count; a malformed annotation counts as absent.
std::int64_t nodeReservedCPUMilli(const NodeInfo& node);
/// reservedCPUs as CPU ids; empty when absent or malformed.
std::vector<int> nodeReservedCPUs(const NodeInfo& node);

}  // namespace koord::roles::koordlet
