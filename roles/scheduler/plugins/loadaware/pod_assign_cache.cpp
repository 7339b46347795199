#include "plugins/loadaware/pod_assign_cache.h"

#include <algorithm>

#include "koord/core/saturating.h"

namespace koord::roles::scheduler::loadaware {

std::atomic<std::uint64_t>* GenerationPool::acquire() {
  std::lock_guard lock(mu_);
  if (free_.empty()) {
    chunks_.push_back(std::make_unique<std::atomic<std::uint64_t>[]>(kChunk));
    for (std::size_t i = kChunk; i > 0; --i)
      free_.push_back(&chunks_.back()[i - 1]);
  }
  auto* generation = free_.back();
  free_.pop_back();
  generation->store(0, std::memory_order_relaxed);
  return generation;
}

void GenerationPool::release(std::atomic<std::uint64_t>* generation) {
  std::lock_guard lock(mu_);
  free_.push_back(generation);
}

NodePods::NodePods(std::shared_ptr<GenerationPool> pool)
    : pool_(std::move(pool)), generation_(pool_->acquire()) {}

NodePods::~NodePods() {
  pool_->release(generation_);
}

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
    return saturatingAdd(*initialized_at, saturatingSeconds(after_initialized));
  if (after_scheduled > 0)
    return saturatingAdd(assigned_at, saturatingSeconds(after_scheduled));
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
  const AssignedPods* current = it == nodes_.end() ? nullptr : it->second->pods_.get();
  const AssignedPod* previous = nullptr;
  if (current) {
    auto p = std::find_if(current->begin(), current->end(),
                          [&](const AssignedPod& a) { return a.uid == pod.uid; });
    if (p != current->end())
      previous = &*p;
  }
  entry.assigned_at = assigned_at ? *assigned_at : previous ? previous->assigned_at : now_();
  entry.estimate_until = estimateUntil(pod, entry.assigned_at, initialized_at);

  auto next = std::make_shared<AssignedPods>();
  if (current) {
    next->reserve(current->size() + 1);
    for (const auto& a : *current) {
      if (a.uid != pod.uid)
        next->push_back(a);
    }
  }
  next->push_back(std::move(entry));
  if (it == nodes_.end())
    it = nodes_.emplace(std::string(node), std::make_shared<NodePods>(generations_)).first;
  publish(*it->second, std::move(next));
}

void PodAssignCache::unassign(std::string_view node, std::string_view uid) {
  std::lock_guard lock(mu_);
  auto it = nodes_.find(node);
  if (it == nodes_.end() || !it->second->pods_)
    return;
  const auto& pods = *it->second->pods_;
  if (std::none_of(pods.begin(), pods.end(), [&](const AssignedPod& a) { return a.uid == uid; }))
    return;
  auto next = std::make_shared<AssignedPods>();
  for (const auto& a : pods) {
    if (a.uid != uid)
      next->push_back(a);
  }
  // The entry stays (readers may hold it); trimLocked drops it once nobody does.
  publish(*it->second, next->empty() ? nullptr : std::move(next));
  trimLocked();
}

void PodAssignCache::publish(NodePods& entry, std::shared_ptr<const AssignedPods> pods) {
  entry.pods_ = std::move(pods);
  entry.generation_->store(++last_generation_, std::memory_order_release);
}

void PodAssignCache::trimLocked() {
  if (nodes_.size() < trim_at_)
    return;
  std::erase_if(nodes_,
                [](const auto& kv) { return !kv.second->pods_ && kv.second.use_count() == 1; });
  trim_at_ = std::max<std::size_t>(1024, 2 * nodes_.size());
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
  return it == nodes_.end() ? nullptr : it->second->pods_;
}

std::shared_ptr<const NodePods> PodAssignCache::entry(std::string_view node) {
  if (node.empty())
    return nullptr;
  {
    std::shared_lock lock(mu_);
    if (auto it = nodes_.find(node); it != nodes_.end())
      return it->second;
  }
  std::lock_guard lock(mu_);
  if (auto it = nodes_.find(node); it != nodes_.end())
    return it->second;
  // Filter asks for every node, pods or not: entries of nodes that have gone go here.
  trimLocked();
  return nodes_.emplace(std::string(node), std::make_shared<NodePods>(generations_)).first->second;
}

std::pair<std::shared_ptr<const AssignedPods>, std::uint64_t> PodAssignCache::read(
    const NodePods& entry) const {
  std::shared_lock lock(mu_);
  return {entry.pods_, entry.generation_->load(std::memory_order_relaxed)};
}

bool PodAssignCache::contains(std::string_view node, std::string_view uid) const {
  auto pods = podsOn(node);
  return pods && std::any_of(pods->begin(), pods->end(),
                             [&](const AssignedPod& a) { return a.uid == uid; });
}

}  // namespace koord::roles::scheduler::loadaware
