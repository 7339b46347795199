// PodLifeTime: the age and state rules and the oldest-first eviction.
#include "plugins/podlifetime/pod_lifetime.h"

#include <algorithm>
#include <chrono>
#include <utility>

#include <fmt/format.h>

#include "koord/core/log.h"

namespace koord::roles::descheduler::podlifetime {

std::optional<std::uint64_t> ageSeconds(const Pod& pod, TimePoint now) {
  if (!pod.creation_timestamp)
    return std::nullopt;
  const auto age = std::chrono::duration_cast<std::chrono::seconds>(now - *pod.creation_timestamp);
  return static_cast<std::uint64_t>(std::max<std::int64_t>(age.count(), 0));
}

Expected<void> PodLifeTime::deschedule(const std::vector<const Node*>& nodes) {
  const Snapshot& snapshot = handle_.snapshot();
  std::vector<const Pod*> old;
  for (const Node* node : nodes) {
    KOORD_VLOG(2, "{}: processing node {}", kPodLifeTimeName, node->name);
    for (const auto& pod : snapshot.podsOn(node->name)) {
      auto age = ageSeconds(*pod, snapshot.now);
      if (!age || *age <= args_->max_pod_lifetime_seconds)
        continue;
      if (pod_filter_.matches(*pod) && inStates(*pod, args_->states))
        old.push_back(pod.get());
    }
  }
  // Every candidate has a creationTimestamp (ageSeconds answered for it).
  std::stable_sort(old.begin(), old.end(), [](const Pod* a, const Pod* b) {
    return *a->creation_timestamp < *b->creation_timestamp;
  });
  for (const Pod* pod : old) {
    if (handle_.totalLimitReached())
      break;
    if (handle_.nodeLimitReached(pod->node_name))
      continue;
    if (!handle_.filter(*pod) || !handle_.preEvictionFilter(*pod))
      continue;
    handle_.evict(
        *pod, {std::string(kPodLifeTimeName), fmt::format("older than maxPodLifeTimeSeconds ({}s)",
                                                          args_->max_pod_lifetime_seconds)});
  }
  return {};
}

}  // namespace koord::roles::descheduler::podlifetime
