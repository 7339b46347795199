#include "plugins/upstream/schedulinggates/scheduling_gates.h"

#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace koord::roles::scheduler::upstream {

Status SchedulingGates::preEnqueue(const PodInfo& pod) const {
  if (pod.scheduling_gates.empty())
    return Status::success();
  // Go's %v of a []string: the names between brackets, separated by spaces.
  return Status::unresolvable(
      fmt::format("waiting for scheduling gates: [{}]", fmt::join(pod.scheduling_gates, " ")));
}

}  // namespace koord::roles::scheduler::upstream
