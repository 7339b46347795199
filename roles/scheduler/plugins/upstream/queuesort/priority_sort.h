// PrioritySort, kube-scheduler's default QueueSort plugin: the active queue pops the pod with
// the highest spec.priority first, and among equals the one queued earliest.
#pragma once

#include <string_view>

#include "framework/plugin.h"

namespace koord::roles::scheduler::upstream {

inline constexpr std::string_view kPrioritySortName = "PrioritySort";

class PrioritySort final : public QueueSortPlugin {
 public:
  std::string_view name() const override { return kPrioritySortName; }
  bool less(const QueuedPodInfo& a, const QueuedPodInfo& b) const override;
};

}  // namespace koord::roles::scheduler::upstream
