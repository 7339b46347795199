#include "plugins/loadaware/pod_assign_cache.h"

#include <algorithm>

namespace koord::roles::scheduler::loadaware {

PodAssignCache::PodAssignCache(const LoadAwareSchedulingArgs& args, ResourceVectorizer vectorizer,
                               NowFn now)
    : estimator_(args),
      vectorizer_(std::move(vectorizer)),
      seconds_after_scheduled_(args.estimated_seconds_after_pod_scheduled),
      seconds_after_initialized_(args.estimated_seconds_after_initialized),
      allow_customize_(args.allow_customize_estimation),
      now_(std::move(now)) {}

std::optional<TimePoint> PodAssignCache::estimateUntil(
    const PodInfo& pod, TimePoint assigned_at, std::optional<TimePoint> initialized_at) const {
  std::int64_t after_scheduled = -1;
  std::int64_t after_initialized = -1;
  if (allow_customize_) {
    after_scheduled =
        customSeconds(pod.annotations, kAnnotationCustomEstimatedSecondsAfterPodScheduled);
    after_initialized =
        customSeconds(pod.annotations, kAnnotationCustomEstimatedSecondsAfterInitialized);
  }
  if (seconds_after_scheduled_ && after_scheduled < 0)
    after_scheduled = *seconds_after_scheduled_;
  if (seconds_after_initialized_ && after_initialized < 0)
    after_initialized = *seconds_after_initialized_;
  // Once initialized, the init containers' (possibly long) wait no longer needs covering: the
  // window counts from initialization instead.
  if (after_initialized > 0 && initialized_at)
    return *initialized_at + std::chrono::seconds(after_initialized);
  if (after_scheduled > 0)
    return assigned_at + std::chrono::seconds(after_scheduled);
  return std::nullopt;
}

void PodAssignCache::assign(std::string_view node, const PodInfo& pod,
                            std::optional<TimePoint> assigned_at,
                            std::optional<TimePoint> initialized_at) {
  if (node.empty() || pod.finished())
    return;
  AssignedPod entry;
  entry.uid = pod.uid;
  entry.key = pod.namespace_ + "/" + pod.name;
  entry.prod = podPriorityWithDefault(pod) == apis::PriorityClass::kProd;
  if (ResourceVector v = vectorizer_.fromFactors(estimator_.estimatePod(pod)); !isZero(v))
    entry.estimated = std::move(v);

  std::lock_guard lock(mu_);
  auto it = nodes_.find(node);
  const AssignedPod* previous = nullptr;
  if (it != nodes_.end()) {
    auto p = std::find_if(it->second->begin(), it->second->end(),
                          [&](const AssignedPod& a) { return a.uid == pod.uid; });
    if (p != it->second->end())
      previous = &*p;
  }
  entry.assigned_at = assigned_at ? *assigned_at : previous ? previous->assigned_at : now_();
  entry.estimate_until = estimateUntil(pod, entry.assigned_at, initialized_at);

  auto next = std::make_shared<AssignedPods>();
  if (it != nodes_.end()) {
    next->reserve(it->second->size() + 1);
    for (const auto& a : *it->second) {
      if (a.uid != pod.uid)
        next->push_back(a);
    }
  }
  next->push_back(std::move(entry));
  if (it != nodes_.end())
    it->second = std::move(next);
  else
    nodes_.emplace(std::string(node), std::move(next));
}

void PodAssignCache::unassign(std::string_view node, std::string_view uid) {
  std::lock_guard lock(mu_);
  auto it = nodes_.find(node);
  if (it == nodes_.end())
    return;
  const auto& pods = *it->second;
  if (std::none_of(pods.begin(), pods.end(), [&](const AssignedPod& a) { return a.uid == uid; }))
    return;
  auto next = std::make_shared<AssignedPods>();
  for (const auto& a : pods) {
    if (a.uid != uid)
      next->push_back(a);
  }
  if (next->empty())
    nodes_.erase(it);
  else
    it->second = std::move(next);
}

void PodAssignCache::onPodAdd(const PodInfo& pod, std::optional<TimePoint> scheduled_at,
                              std::optional<TimePoint> initialized_at) {
  assign(pod.node_name, pod, scheduled_at, initialized_at);
}

void PodAssignCache::onPodUpdate(const PodInfo& old_pod, const PodInfo& new_pod,
                                 std::optional<TimePoint> scheduled_at,
                                 std::optional<TimePoint> initialized_at) {
  // A pod that moved must not leave its estimate behind on the old node.
  if (!old_pod.node_name.empty() && old_pod.node_name != new_pod.node_name)
    unassign(old_pod.node_name, new_pod.uid);
  if (new_pod.finished())
    unassign(new_pod.node_name, new_pod.uid);
  else
    assign(new_pod.node_name, new_pod, scheduled_at, initialized_at);
}

void PodAssignCache::onPodDelete(const PodInfo& pod) {
  unassign(pod.node_name, pod.uid);
}

std::shared_ptr<const AssignedPods> PodAssignCache::podsOn(std::string_view node) const {
  std::shared_lock lock(mu_);
  auto it = nodes_.find(node);
  return it == nodes_.end() ? nullptr : it->second;
}

bool PodAssignCache::contains(std::string_view node, std::string_view uid) const {
  auto pods = podsOn(node);
  return pods && std::any_of(pods->begin(), pods->end(),
                             [&](const AssignedPod& a) { return a.uid == uid; });
}

}  // namespace koord::roles::scheduler::loadaware
