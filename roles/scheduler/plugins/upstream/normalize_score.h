// kube-scheduler's DefaultNormalizeScore, shared by the upstream Score plugins whose raw scores
// are counts or weight sums rather than values already in [0, kMaxNodeScore].
#pragma once

#include <cstdint>
#include <vector>

#include "framework/plugin.h"

namespace koord::roles::scheduler::upstream {

/// Scales every score by max_priority / (the highest score). With reverse the scale is flipped
/// (max_priority - scaled), so the node with the most of a bad thing gets 0. When every score
/// is 0 they stay 0, or all become max_priority when reversed.
void defaultNormalizeScore(std::int64_t max_priority, bool reverse, std::vector<NodeScore>& scores);

}  // namespace koord::roles::scheduler::upstream
