// PodLifeTime: the age and state rules and the oldest-first eviction.
#include "plugins/podlifetime/pod_lifetime.h"

#include <algorithm>
#include <chrono>
#include <utility>

#include <fmt/format.h>

#include "koord/core/log.h"

namespace koord::roles::descheduler::podlifetime {

namespace {

bool contains(const std::vector<std::string>& list, std::string_view s) {
  return std::find(list.begin(), list.end(), s) != list.end();
}

}  // namespace

std::optional<std::uint64_t> ageSeconds(const Pod& pod, TimePoint now) {
  if (!pod.creation_timestamp)
    return std::nullopt;
  const auto age = std::chrono::duration_cast<std::chrono::seconds>(now - *pod.creation_timestamp);
  return static_cast<std::uint64_t>(std::max<std::int64_t>(age.count(), 0));
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

PodLifeTime::PodLifeTime(std::shared_ptr<const PodLifeTimeArgs> args, FrameworkHandle& handle,
                         podfilter::PodFilter selection)
    : args_(std::move(args)), handle_(handle), selection_(std::move(selection)) {}

Expected<void> PodLifeTime::deschedule(const std::vector<const Node*>& nodes) {
  const Snapshot& snapshot = handle_.snapshot();
  std::vector<const Pod*> old;
  for (const Node* node : nodes) {
    KOORD_VLOG(2, "{}: processing node {}", kPodLifeTimeName, node->name);
    for (const auto& pod : snapshot.podsOn(node->name)) {
      auto age = ageSeconds(*pod, snapshot.now);
      if (!age || *age <= args_->max_pod_lifetime_seconds)
        continue;
      if (selection_.matches(*pod) && inStates(*pod, args_->states))
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
