// SchedulingGates (kube-scheduler 1.26+): a pod with spec.schedulingGates left waits outside
// the active queue, gated, until an update removes the last of them.
#pragma once

#include <string_view>

#include "framework/plugin.h"

namespace koord::roles::scheduler::upstream {

inline constexpr std::string_view kSchedulingGatesName = "SchedulingGates";

class SchedulingGates final : public PreEnqueuePlugin {
 public:
  std::string_view name() const override { return kSchedulingGatesName; }
  /// UnschedulableAndUnresolvable "waiting for scheduling gates: [a b]" while any is left.
  Status preEnqueue(const PodInfo& pod) const override;
};

}  // namespace koord::roles::scheduler::upstream
