// Preemption's choice among candidate nodes (kube-scheduler 1.20's pickOneNodeForPreemption):
// the cheapest disruption by a fixed order of tie-breaks.
#pragma once

#include <chrono>
#include <cstddef>
#include <vector>

#include "plugins/upstream/defaultpreemption/victims.h"

namespace koord::roles::scheduler::upstream {

/// The index of the chosen candidate (`candidates` must not be empty): a node without victims
/// at once; else the fewest PDB violations, the lowest highest victim priority, the smallest
/// sum of victim priorities (each shifted by 2^31 so that more negative-priority victims never
/// look cheaper), the fewest victims, the latest earliest-start among the highest-priority
/// victims, and finally the first in `candidates`.
std::size_t pickOneNodeForPreemption(const std::vector<Candidate>& candidates,
                                     std::chrono::system_clock::time_point now);

}  // namespace koord::roles::scheduler::upstream
