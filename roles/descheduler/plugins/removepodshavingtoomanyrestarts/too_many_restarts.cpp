// RemovePodsHavingTooManyRestarts: the restart count rule and the per-node eviction loop.
#include "plugins/removepodshavingtoomanyrestarts/too_many_restarts.h"

#include <algorithm>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "koord/core/log.h"

namespace koord::roles::descheduler::toomanyrestarts {

std::int32_t totalRestarts(const Pod& pod, bool including_init_containers) {
  std::int32_t restarts = 0;
  for (const auto& c : pod.container_statuses) {
    if (!c.init || including_init_containers)
      restarts += c.restart_count;
  }
  return restarts;
}

Expected<void> RemovePodsHavingTooManyRestarts::deschedule(const std::vector<const Node*>& nodes) {
  for (const Node* node : nodes) {
    KOORD_VLOG(2, "{}: processing node {}", kTooManyRestartsName, node->name);
    const bool more = eachPodUnderCaps(*node, [&](const Pod& pod) {
      if (!pod_filter_.matches(pod) || !inStates(pod, args_->states))
        return;
      const std::int32_t restarts = totalRestarts(pod, args_->including_init_containers);
      if (restarts < args_->pod_restart_threshold) {
        KOORD_VLOG(4, "{}: pod {} restarted {} times, below the threshold {}", kTooManyRestartsName,
                   pod.key(), restarts, args_->pod_restart_threshold);
        return;
      }
      if (handle_.filter(pod) && handle_.preEvictionFilter(pod))
        handle_.evict(pod, {std::string(kTooManyRestartsName),
                            fmt::format("its containers restarted {} times (threshold {})",
                                        restarts, args_->pod_restart_threshold)});
    });
    if (!more)
      return {};
  }
  return {};
}

}  // namespace koord::roles::descheduler::toomanyrestarts
