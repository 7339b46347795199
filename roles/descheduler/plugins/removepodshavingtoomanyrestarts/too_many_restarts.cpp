// RemovePodsHavingTooManyRestarts: the restart count rule and the per-node eviction loop.
#include "plugins/removepodshavingtoomanyrestarts/too_many_restarts.h"

#include <algorithm>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "koord/core/log.h"

namespace koord::roles::descheduler::toomanyrestarts {

namespace {

bool contains(const std::vector<std::string>& list, std::string_view s) {
  return std::find(list.begin(), list.end(), s) != list.end();
}

}  // namespace

std::int32_t totalRestarts(const Pod& pod, bool including_init_containers) {
  std::int32_t restarts = 0;
  for (const auto& c : pod.container_statuses) {
    if (!c.init || including_init_containers)
      restarts += c.restart_count;
  }
  return restarts;
}

bool inStates(const Pod& pod, const std::vector<std::string>& states) {
  if (states.empty() || contains(states, phaseName(pod.phase)))
    return true;
  for (const auto& c : pod.container_statuses) {
    if (!c.init && !c.waiting_reason.empty() && contains(states, c.waiting_reason))
      return true;
  }
  return false;
}

RemovePodsHavingTooManyRestarts::RemovePodsHavingTooManyRestarts(
    std::shared_ptr<const RemovePodsHavingTooManyRestartsArgs> args, FrameworkHandle& handle,
    podfilter::PodFilter selection)
    : args_(std::move(args)), handle_(handle), selection_(std::move(selection)) {}

Expected<void> RemovePodsHavingTooManyRestarts::deschedule(const std::vector<const Node*>& nodes) {
  const Snapshot& snapshot = handle_.snapshot();
  for (const Node* node : nodes) {
    KOORD_VLOG(2, "{}: processing node {}", kTooManyRestartsName, node->name);
    for (const auto& pod : snapshot.podsOn(node->name)) {
      if (handle_.totalLimitReached())
        return {};
      if (handle_.nodeLimitReached(node->name))
        break;
      if (!selection_.matches(*pod) || !inStates(*pod, args_->states))
        continue;
      const std::int32_t restarts = totalRestarts(*pod, args_->including_init_containers);
      if (restarts < args_->pod_restart_threshold) {
        KOORD_VLOG(4, "{}: pod {} restarted {} times, below the threshold {}", kTooManyRestartsName,
                   pod->key(), restarts, args_->pod_restart_threshold);
        continue;
      }
      if (!handle_.filter(*pod) || !handle_.preEvictionFilter(*pod))
        continue;
      handle_.evict(*pod, {std::string(kTooManyRestartsName),
                           fmt::format("its containers restarted {} times (threshold {})", restarts,
                                       args_->pod_restart_threshold)});
    }
  }
  return {};
}

}  // namespace koord::roles::descheduler::toomanyrestarts
