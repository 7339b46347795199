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

Expected<void> RemoveFailedPods::deschedule(const std::vector<const Node*>& nodes) {
  const TimePoint now = handle_.snapshot().now;
  for (const Node* node : nodes) {
    KOORD_VLOG(2, "{}: processing node {}", kRemoveFailedPodsName, node->name);
    const bool more = eachPodUnderCaps(*node, [&](const Pod& pod) {
      if (pod.phase != PodPhase::kFailed || !pod_filter_.matches(pod))
        return;
      if (auto why = failedPodRefusals(pod, *args_, now); !why.empty()) {
        KOORD_VLOG(4, "{}: pod {} stays: {}", kRemoveFailedPodsName, pod.key(),
                   fmt::join(why, "; "));
        return;
      }
      if (handle_.filter(pod) && handle_.preEvictionFilter(pod))
        handle_.evict(pod, {std::string(kRemoveFailedPodsName), "a Failed pod"});
    });
    if (!more)
      return {};
  }
  return {};
}

}  // namespace koord::roles::descheduler::failedpods
