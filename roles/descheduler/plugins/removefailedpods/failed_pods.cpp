// RemoveFailedPods: the age, owner-kind and reason rules and the per-node eviction loop.
#include "plugins/removefailedpods/failed_pods.h"

#include <algorithm>
#include <chrono>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "koord/core/log.h"

namespace koord::roles::descheduler::failedpods {

namespace {

bool contains(const std::vector<std::string>& list, std::string_view s) {
  return std::find(list.begin(), list.end(), s) != list.end();
}

// The pod's reason counts only for a Failed pod; containers' waiting and terminated reasons always,
// init containers' only when asked.
bool hasListedReason(const Pod& pod, const RemoveFailedPodsArgs& args) {
  if (pod.phase == PodPhase::kFailed && !pod.reason.empty() && contains(args.reasons, pod.reason))
    return true;
  for (const auto& c : pod.container_statuses) {
    if (c.init && !args.including_init_containers)
      continue;
    for (const std::string& r : {c.waiting_reason, c.terminated_reason}) {
      if (!r.empty() && contains(args.reasons, r))
        return true;
    }
  }
  return false;
}

}  // namespace

std::vector<std::string> failedPodRefusals(const Pod& pod, const RemoveFailedPodsArgs& args,
                                           TimePoint now) {
  std::vector<std::string> out;
  // Without a creationTimestamp the age is unknown: too young to be sure.
  const std::int64_t age =
      pod.creation_timestamp
          ? std::chrono::duration_cast<std::chrono::seconds>(now - *pod.creation_timestamp).count()
          : -1;
  if (age < 0 || static_cast<std::uint64_t>(age) < args.min_pod_lifetime_seconds)
    out.push_back(
        fmt::format("younger than minPodLifetimeSeconds ({}s)", args.min_pod_lifetime_seconds));
  for (const auto& owner : pod.owner_refs) {
    if (contains(args.exclude_owner_kinds, owner.kind))
      out.push_back(fmt::format("owned by a {}, an excluded kind", owner.kind));
  }
  if (!args.reasons.empty() && !hasListedReason(pod, args))
    out.emplace_back("none of the listed reasons");
  return out;
}

RemoveFailedPods::RemoveFailedPods(std::shared_ptr<const RemoveFailedPodsArgs> args,
                                   FrameworkHandle& handle, podfilter::PodFilter selection)
    : args_(std::move(args)), handle_(handle), selection_(std::move(selection)) {}

Expected<void> RemoveFailedPods::deschedule(const std::vector<const Node*>& nodes) {
  const Snapshot& snapshot = handle_.snapshot();
  for (const Node* node : nodes) {
    KOORD_VLOG(2, "{}: processing node {}", kRemoveFailedPodsName, node->name);
    for (const auto& pod : snapshot.podsOn(node->name)) {
      if (handle_.totalLimitReached())
        return {};
      if (handle_.nodeLimitReached(node->name))
        break;
      if (pod->phase != PodPhase::kFailed || !selection_.matches(*pod))
        continue;
      if (auto why = failedPodRefusals(*pod, *args_, snapshot.now); !why.empty()) {
        KOORD_VLOG(4, "{}: pod {} stays: {}", kRemoveFailedPodsName, pod->key(),
                   fmt::join(why, "; "));
        continue;
      }
      if (!handle_.filter(*pod) || !handle_.preEvictionFilter(*pod))
        continue;
      handle_.evict(*pod, {std::string(kRemoveFailedPodsName), "a Failed pod"});
    }
  }
  return {};
}

}  // namespace koord::roles::descheduler::failedpods
