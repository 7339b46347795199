// DefaultPreemptionArgs: how many nodes preemption's dry run must turn into candidates before it
// stops looking (kube-scheduler's minCandidateNodesPercentage / minCandidateNodesAbsolute).
#pragma once

#include <boost/json/fwd.hpp>

#include <cstdint>
#include <memory>

#include "framework/plugin.h"
#include "koord/kube/error.h"

namespace koord::roles::scheduler::upstream {

struct DefaultPreemptionArgs final : PluginArgs {
  /// Share of the nodes, in [0, 100].
  std::int32_t min_candidate_nodes_percentage = 10;
  /// At least this many (capped at the node count); >= 0, not 0 together with the percentage.
  std::int32_t min_candidate_nodes_absolute = 100;
};

/// Strict decoding with the defaults every apiVersion shares; an unknown field, a non-integer or
/// an out-of-range value is an error naming the field.
kube::Expected<std::shared_ptr<const DefaultPreemptionArgs>> decodeDefaultPreemptionArgs(
    const boost::json::value* args);

}  // namespace koord::roles::scheduler::upstream
