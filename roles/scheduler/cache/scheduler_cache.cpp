#include "scheduler_cache.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

namespace koord::roles::scheduler {

namespace {

kube::Error cacheError(std::string message) {
  return kube::makeKubeError(std::move(message));
}

}  // namespace

std::shared_ptr<NodeInfo> SchedulerCache::copyOf(const std::string& name) const {
  if (auto it = nodes_.find(name); it != nodes_.end())
    return std::make_shared<NodeInfo>(*it->second);
  auto fresh = std::make_shared<NodeInfo>();
  fresh->slot = nodeSlotOf(name);
  if (auto objects = node_objects_.find(name); objects != node_objects_.end()) {
    for (const auto& [kind, attach] : objects->second)
      attach(*fresh);
  }
  return fresh;
}

void SchedulerCache::publish(const std::string& name, std::shared_ptr<NodeInfo> info) {
  auto [it, fresh] = nodes_.try_emplace(name);
  if (!fresh)
    by_generation_.erase(it->second->generation);
  info->generation = ++generation_;
  by_generation_.emplace(info->generation, name);
  it->second = std::move(info);
}

void SchedulerCache::erase(const std::string& name) {
  auto it = nodes_.find(name);
  if (it == nodes_.end())
    return;
  by_generation_.erase(it->second->generation);
  nodes_.erase(it);
}

kube::Expected<void> SchedulerCache::setNodeLocked(std::shared_ptr<const Node> node) {
  if (node == nullptr)
    return cacheError("node: null");
  if (node->name.empty())
    return cacheError("node metadata.name: empty");
  const std::string name = node->name;
  auto info = copyOf(name);
  const std::string zone = zoneKey(*node);
  countImages(info->node.get(), node.get());
  info->node = std::move(node);
  publish(name, std::move(info));
  if (tree_.add(name, zone))
    tree_generation_ = generation_;
  return {};
}

void SchedulerCache::countImages(const Node* before, const Node* after) {
  // Heartbeats mostly carry the same images: nothing to move then.
  if (before != nullptr && after != nullptr && before->images.sameNames(after->images))
    return;
  if (before != nullptr && !before->images.empty()) {
    image_counts_.add(before->images, -1);
    published_image_counts_ = nullptr;
  }
  if (after != nullptr && !after->images.empty()) {
    image_counts_.add(after->images, +1);
    published_image_counts_ = nullptr;
  }
}

kube::Expected<void> SchedulerCache::addNode(std::shared_ptr<const Node> node) {
  std::lock_guard lock(mu_);
  return setNodeLocked(std::move(node));
}

kube::Expected<void> SchedulerCache::updateNode(std::shared_ptr<const Node> node) {
  std::lock_guard lock(mu_);
  return setNodeLocked(std::move(node));
}

kube::Expected<void> SchedulerCache::removeNode(const std::string& name) {
  std::lock_guard lock(mu_);
  auto it = nodes_.find(name);
  if (it == nodes_.end() || it->second->node == nullptr)
    return cacheError(fmt::format("node {}: not found in the scheduler cache", name));
  countImages(it->second->node.get(), nullptr);
  if (it->second->pods.empty() && it->second->reservations.empty()) {
    erase(name);
    ++generation_;
  } else {
    auto info = copyOf(name);
    info->node = nullptr;
    publish(name, std::move(info));
  }
  tree_.remove(name);
  tree_generation_ = generation_;
  return {};
}

kube::Expected<void> SchedulerCache::setNodeObject(const std::string& kind,
                                                   const std::string& node_name,
                                                   std::function<void(NodeInfo&)> attach) {
  std::lock_guard lock(mu_);
  if (nodes_.contains(node_name)) {
    auto info = copyOf(node_name);
    attach(*info);
    publish(node_name, std::move(info));
  }
  node_objects_[node_name][kind] = std::move(attach);
  return {};
}

kube::Expected<void> SchedulerCache::removeNodeObject(
    const std::string& kind, const std::string& node_name,
    const std::function<void(NodeInfo&)>& detach) {
  std::lock_guard lock(mu_);
  auto objects = node_objects_.find(node_name);
  if (objects == node_objects_.end() || objects->second.erase(kind) == 0)
    return cacheError(fmt::format("{} {}: not found in the scheduler cache", kind, node_name));
  if (objects->second.empty())
    node_objects_.erase(objects);
  if (nodes_.contains(node_name)) {
    auto info = copyOf(node_name);
    detach(*info);
    publish(node_name, std::move(info));
  }
  return {};
}

kube::Expected<void> SchedulerCache::setNodeMetric(const std::string& node_name,
                                                   std::shared_ptr<const apis::NodeMetric> metric) {
  if (metric == nullptr)
    return cacheError(fmt::format("nodeMetric {}: null", node_name));
  return setNodeObject("nodeMetric", node_name,
                       [metric](NodeInfo& info) { info.node_metric = metric; });
}

kube::Expected<void> SchedulerCache::removeNodeMetric(const std::string& node_name) {
  return removeNodeObject("nodeMetric", node_name,
                          [](NodeInfo& info) { info.node_metric = nullptr; });
}

void SchedulerCache::addPodLocked(std::shared_ptr<const PodInfo> pod) {
  const std::string node = pod->node_name;
  auto info = copyOf(node);
  info->addPod(std::move(pod));
  publish(node, std::move(info));
}

kube::Expected<void> SchedulerCache::removePodLocked(const PodInfo& pod) {
  auto it = nodes_.find(pod.node_name);
  if (it == nodes_.end())
    return cacheError(
        fmt::format("pod {}: node {} not found in the scheduler cache", pod.key(), pod.node_name));
  auto info = std::make_shared<NodeInfo>(*it->second);
  if (!info->removePod(pod.uid))
    return cacheError(fmt::format("pod {}: not found on node {}", pod.key(), pod.node_name));
  publishOrErase(pod.node_name, std::move(info));
  return {};
}

void SchedulerCache::publishOrErase(const std::string& name, std::shared_ptr<NodeInfo> info) {
  if (info->pods.empty() && info->reservations.empty() && info->node == nullptr)
    erase(name);
  else
    publish(name, std::move(info));
}

void SchedulerCache::removeReservationLocked(const std::string& uid) {
  if (assumed_.contains(uid)) {
    auto pod = pods_.find(uid);
    // The assumed reserve pod is in pods_ by construction; its removal cannot fail.
    (void)removePodLocked(*pod->second.pod);
    assumed_.erase(uid);
    pods_.erase(pod);
  }
  auto it = reservations_.find(uid);
  if (it == reservations_.end())
    return;
  const std::string node = it->second;
  reservations_.erase(it);
  if (!nodes_.contains(node))
    return;
  auto info = copyOf(node);
  if (info->removeReservation(uid))
    publishOrErase(node, std::move(info));
}

kube::Expected<void> SchedulerCache::addReservation(
    std::shared_ptr<const ReservationInfo> reservation) {
  if (reservation == nullptr)
    return cacheError("reservation: null");
  if (reservation->node_name.empty())
    return cacheError(fmt::format("reservation {}: status.nodeName is empty, cannot be added",
                                  reservation->name));
  std::lock_guard lock(mu_);
  removeReservationLocked(reservation->uid);
  const std::string node = reservation->node_name;
  reservations_.emplace(reservation->uid, node);
  auto info = copyOf(node);
  info->addReservation(std::move(reservation));
  publish(node, std::move(info));
  return {};
}

void SchedulerCache::removeReservation(const std::string& uid) {
  std::lock_guard lock(mu_);
  removeReservationLocked(uid);
}

std::size_t SchedulerCache::reservationCount() const {
  std::lock_guard lock(mu_);
  return reservations_.size();
}

kube::Expected<void> SchedulerCache::assumePod(std::shared_ptr<const PodInfo> pod) {
  if (pod == nullptr)
    return cacheError("pod: null");
  if (pod->node_name.empty())
    return cacheError(fmt::format("pod {}: spec.nodeName is empty, cannot be assumed", pod->key()));
  std::lock_guard lock(mu_);
  if (pods_.contains(pod->uid))
    return cacheError(
        fmt::format("pod {} (node {}): is in the scheduler cache, so can't be assumed", pod->key(),
                    pod->node_name));
  const std::string uid = pod->uid;
  addPodLocked(pod);
  pods_.emplace(uid, PodState{std::move(pod), false, std::nullopt});
  assumed_.insert(uid);
  return {};
}

bool SchedulerCache::finishBinding(const PodInfo& pod, Clock::time_point now) {
  std::lock_guard lock(mu_);
  auto it = pods_.find(pod.uid);
  if (it == pods_.end() || !assumed_.contains(pod.uid))
    return false;
  it->second.binding_finished = true;
  it->second.deadline = now + ttl_;
  return true;
}

kube::Expected<void> SchedulerCache::forgetPod(const PodInfo& pod) {
  std::lock_guard lock(mu_);
  auto it = pods_.find(pod.uid);
  if (it != pods_.end() && it->second.pod->node_name != pod.node_name)
    return cacheError(fmt::format("pod {}: was assumed on node {} but forgotten on node {}",
                                  pod.key(), it->second.pod->node_name, pod.node_name));
  if (it == pods_.end() || !assumed_.contains(pod.uid))
    return cacheError(fmt::format("pod {} (node {}): wasn't assumed so cannot be forgotten",
                                  pod.key(), pod.node_name));
  if (auto removed = removePodLocked(*it->second.pod); !removed)
    return removed;
  assumed_.erase(pod.uid);
  pods_.erase(it);
  return {};
}

kube::Expected<void> SchedulerCache::addPod(std::shared_ptr<const PodInfo> pod) {
  if (pod == nullptr)
    return cacheError("pod: null");
  if (pod->node_name.empty())
    return cacheError(fmt::format("pod {}: spec.nodeName is empty, cannot be added", pod->key()));
  std::lock_guard lock(mu_);
  auto it = pods_.find(pod->uid);
  if (it == pods_.end()) {
    const std::string uid = pod->uid;
    addPodLocked(pod);
    pods_.emplace(uid, PodState{std::move(pod), false, std::nullopt});
    return {};
  }
  if (!assumed_.contains(pod->uid))
    return cacheError(
        fmt::format("pod {} (node {}): was already in added state", pod->key(), pod->node_name));
  // Confirmation: the informer's copy replaces the assumed one, on whichever node it landed.
  if (auto removed = removePodLocked(*it->second.pod); !removed)
    return removed;
  addPodLocked(pod);
  assumed_.erase(pod->uid);
  it->second = PodState{std::move(pod), false, std::nullopt};
  return {};
}

kube::Expected<void> SchedulerCache::updatePod(const PodInfo& old_pod,
                                               std::shared_ptr<const PodInfo> new_pod) {
  if (new_pod == nullptr)
    return cacheError(fmt::format("pod {}: new object is null", old_pod.key()));
  std::lock_guard lock(mu_);
  auto it = pods_.find(old_pod.uid);
  if (it == pods_.end() || assumed_.contains(old_pod.uid))
    return cacheError(
        fmt::format("pod {} (node {}): is not added to scheduler cache, so cannot be updated",
                    old_pod.key(), old_pod.node_name));
  // Upstream treats a bound pod changing nodes as a corrupt cache (klog.Fatal); refuse it.
  if (it->second.pod->node_name != new_pod->node_name)
    return cacheError(fmt::format("pod {}: updated on node {} but was added on node {}",
                                  old_pod.key(), new_pod->node_name, it->second.pod->node_name));
  if (auto removed = removePodLocked(*it->second.pod); !removed)
    return removed;
  addPodLocked(new_pod);
  it->second.pod = std::move(new_pod);
  return {};
}

kube::Expected<void> SchedulerCache::removePod(const PodInfo& pod) {
  std::lock_guard lock(mu_);
  auto it = pods_.find(pod.uid);
  if (it == pods_.end() || assumed_.contains(pod.uid))
    return cacheError(
        fmt::format("pod {} (node {}): is not found in scheduler cache, so cannot be removed",
                    pod.key(), pod.node_name));
  if (it->second.pod->node_name != pod.node_name)
    return cacheError(fmt::format("pod {}: removed from node {} but was added on node {}",
                                  pod.key(), pod.node_name, it->second.pod->node_name));
  if (auto removed = removePodLocked(*it->second.pod); !removed)
    return removed;
  pods_.erase(it);
  return {};
}

kube::Expected<std::size_t> SchedulerCache::cleanupAssumedPods(Clock::time_point now) {
  std::lock_guard lock(mu_);
  std::vector<std::string> expired;
  for (const auto& uid : assumed_) {
    const PodState& state = pods_.at(uid);
    if (state.binding_finished && now > *state.deadline)
      expired.push_back(uid);
  }
  std::size_t removed = 0;
  std::string failures;
  for (const auto& uid : expired) {
    auto it = pods_.find(uid);
    // A pod its NodeInfo lost stays assumed (and reported) rather than vanishing unnoticed;
    // the other expired pods still go.
    if (auto gone = removePodLocked(*it->second.pod); !gone) {
      failures += failures.empty() ? "" : "; ";
      failures += gone.error().message;
      continue;
    }
    assumed_.erase(uid);
    pods_.erase(it);
    ++removed;
  }
  if (!failures.empty())
    return cacheError(fmt::format("expiring assumed pods: {}", failures));
  return removed;
}

bool SchedulerCache::isAssumedPod(const std::string& uid) const {
  std::lock_guard lock(mu_);
  return assumed_.contains(uid);
}

kube::Expected<std::shared_ptr<const PodInfo>> SchedulerCache::getPod(
    const std::string& uid) const {
  std::lock_guard lock(mu_);
  auto it = pods_.find(uid);
  if (it == pods_.end())
    return cacheError(fmt::format("pod uid {}: does not exist in scheduler cache", uid));
  return it->second.pod;
}

std::shared_ptr<const NodeInfo> SchedulerCache::nodeInfo(const std::string& name) const {
  std::lock_guard lock(mu_);
  auto it = nodes_.find(name);
  return it == nodes_.end() ? nullptr : it->second;
}

void SchedulerCache::updateSnapshot(Snapshot& snapshot) const {
  std::lock_guard lock(mu_);
  if (snapshot.generation < tree_generation_ || snapshot.size() != tree_.numNodes()) {
    auto& list = snapshot.mutableNodes();
    list.clear();
    for (const auto& name : tree_.list())
      list.push_back(nodes_.at(name));
    snapshot.reindex();
  } else {
    for (auto it = by_generation_.upper_bound(snapshot.generation); it != by_generation_.end();
         ++it) {
      const auto& info = nodes_.at(it->second);
      if (info->node != nullptr)
        snapshot.replace(info);
    }
  }
  if (published_image_counts_ == nullptr)
    published_image_counts_ = image_counts_.publish();
  snapshot.setImageNodeCounts(published_image_counts_);
  snapshot.generation = generation_;
}

CacheDump SchedulerCache::dump() const {
  std::lock_guard lock(mu_);
  CacheDump out;
  for (const auto& [name, info] : nodes_) {
    auto& entry = out.nodes[name];
    entry.has_node = info->node != nullptr;
    entry.generation = info->generation;
    for (const auto& pod : info->pods)
      entry.pods.push_back(pod->key());
  }
  for (const auto& uid : assumed_)
    out.assumed.push_back(pods_.at(uid).pod->key());
  std::sort(out.assumed.begin(), out.assumed.end());
  return out;
}

CacheCounts SchedulerCache::counts() const {
  std::lock_guard lock(mu_);
  return {nodes_.size(), pods_.size(), assumed_.size()};
}

}  // namespace koord::roles::scheduler
