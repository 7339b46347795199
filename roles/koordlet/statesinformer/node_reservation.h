// The node.koordinator.sh/reservation annotation as the koordlet reads it: CPU an operator keeps
// away from pods (resources.cpu) and the CPUs it pins away (reservedCPUs).
#pragma once

#include <cstdint>
#include <vector>

#include "koord/kube/error.h"
#include "statesinformer/node_info.h"

namespace koord::roles::koordlet {

/// The parts of the annotation the koordlet uses.
struct NodeReservation {
  /// resources.cpu in milli-cores; 0 when absent.
  std::int64_t cpu_milli = 0;
  /// reservedCPUs as CPU ids, sorted.
  std::vector<int> reserved_cpus;
};

/// The node's annotation; empty when absent, empty or null. Refused, with an error naming the
/// field: text that is not a JSON object, longer than an annotation may be, a resources list
/// that is not one (a quantity as a string or a number), a reservedCPUs that is not a CPU list
/// string. The caller logs the error and treats the annotation as absent.
kube::Expected<NodeReservation> nodeReservation(const NodeInfo& node);

/// Koordinator's node reserved CPU: the largest of the kubelet's (capacity - allocatable), the
/// reservation's resources.cpu and its reservedCPUs count.
std::int64_t nodeReservedCPUMilli(const NodeInfo& node, const NodeReservation& reservation);

}  // namespace koord::roles::koordlet
