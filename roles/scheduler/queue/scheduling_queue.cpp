#include "queue/scheduling_queue.h"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "queue/pod_updated.h"

namespace koord::roles::scheduler {

namespace {

kube::Error nullPod(std::string_view field) {
  return kube::makeKubeError(fmt::format("{}: must not be null", field));
}

// An affinity term with no namespaces means the namespace of the pod that carries it.
bool termMatches(const PodAffinityTerm& term, const std::string& owner_namespace,
                 const PodInfo& pod) {
  const bool in_namespace = term.namespaces.empty()
                                ? pod.namespace_ == owner_namespace
                                : std::find(term.namespaces.begin(), term.namespaces.end(),
                                            pod.namespace_) != term.namespaces.end();
  return in_namespace && term.label_selector.matches(pod.labels);
}

}  // namespace

kube::Expected<void> validateSchedulingQueueOptions(const SchedulingQueueOptions& options) {
  if (options.pod_initial_backoff <= std::chrono::nanoseconds::zero()) {
    return kube::makeKubeError(
        fmt::format("podInitialBackoffSeconds: must be greater than 0, got {}ns",
                    options.pod_initial_backoff.count()));
  }
  if (options.pod_max_backoff < options.pod_initial_backoff) {
    return kube::makeKubeError(fmt::format(
        "podMaxBackoffSeconds: must be greater than or equal to podInitialBackoffSeconds ({}ns), "
        "got {}ns",
        options.pod_initial_backoff.count(), options.pod_max_backoff.count()));
  }
  return {};
}

std::chrono::nanoseconds podBackoffDuration(int attempts, std::chrono::nanoseconds initial,
                                            std::chrono::nanoseconds max) {
  std::chrono::nanoseconds duration = initial;
  for (int i = 1; i < attempts; ++i) {
    // Checked before doubling so that a large max cannot overflow.
    if (duration > max / 2)
      return max;
    duration *= 2;
  }
  return std::min(duration, max);
}

kube::Expected<std::unique_ptr<SchedulingQueue>> SchedulingQueue::create(
    Less less, SchedulingQueueOptions options) {
  if (!less)
    return kube::makeKubeError("queueSort: a less function is required");
  if (auto valid = validateSchedulingQueueOptions(options); !valid)
    return valid.error();
  return std::unique_ptr<SchedulingQueue>(new SchedulingQueue(std::move(less), std::move(options)));
}

SchedulingQueue::SchedulingQueue(Less less, SchedulingQueueOptions options)
    : initial_backoff_(options.pod_initial_backoff),
      max_backoff_(options.pod_max_backoff),
      now_(options.now ? std::move(options.now) : [] { return std::chrono::steady_clock::now(); }),
      on_incoming_(std::move(options.on_incoming)),
      pre_enqueue_(std::move(options.pre_enqueue)),
      on_unschedulable_(std::move(options.on_unschedulable)),
      active_(std::move(less), std::move(options.sort_handle)),
      backoff_([initial = options.pod_initial_backoff, max = options.pod_max_backoff](
                   const QueuedPodInfo& a, const QueuedPodInfo& b) {
        return a.timestamp + podBackoffDuration(a.attempts, initial, max) <
               b.timestamp + podBackoffDuration(b.attempts, initial, max);
      }) {}

SchedulingQueue::TimePoint SchedulingQueue::now() const {
  return now_();
}

QueuedPodInfo SchedulingQueue::newQueuedPodInfo(std::shared_ptr<const PodInfo> pod) const {
  const TimePoint t = now();
  return QueuedPodInfo{.pod = std::move(pod), .timestamp = t, .initial_attempt_timestamp = t};
}

SchedulingQueue::TimePoint SchedulingQueue::backoffExpiry(const QueuedPodInfo& info) const {
  return info.timestamp + podBackoffDuration(info.attempts, initial_backoff_, max_backoff_);
}

bool SchedulingQueue::isBackingOff(const QueuedPodInfo& info) const {
  return backoffExpiry(info) > now();
}

void SchedulingQueue::incoming(std::string_view queue, QueueEvent event) const {
  if (on_incoming_)
    on_incoming_(queue, event);
}

void SchedulingQueue::putUnschedulable(const std::string& key, QueuedPodInfo info) {
  auto [it, inserted] = unschedulable_.try_emplace(key);
  if (!inserted && on_unschedulable_)
    on_unschedulable_(it->second, -1);
  it->second = std::move(info);
  if (on_unschedulable_)
    on_unschedulable_(it->second, +1);
}

QueuedPodInfo SchedulingQueue::eraseUnschedulable(
    std::unordered_map<std::string, QueuedPodInfo>::iterator it) {
  if (on_unschedulable_)
    on_unschedulable_(it->second, -1);
  QueuedPodInfo info = std::move(it->second);
  unschedulable_.erase(it);
  return info;
}

void SchedulingQueue::eraseUnschedulable(const std::string& key) {
  if (auto it = unschedulable_.find(key); it != unschedulable_.end())
    (void)eraseUnschedulable(it);
}

kube::Expected<void> SchedulingQueue::add(std::shared_ptr<const PodInfo> pod) {
  if (!pod)
    return nullPod("pod");
  const bool allowed = !pre_enqueue_ || pre_enqueue_(*pod);
  std::lock_guard lock(mu_);
  const std::string key = pod->key();
  if (!allowed) {
    active_.erase(key);
    eraseUnschedulable(key);
    backoff_.erase(key);
    gated_.insert_or_assign(key, newQueuedPodInfo(std::move(pod)));
    incoming(kGatedQueue, QueueEvent::kPodAdd);
    return {};
  }
  gated_.erase(key);
  active_.addOrUpdate(newQueuedPodInfo(pod));
  eraseUnschedulable(key);
  backoff_.erase(key);
  incoming(kActiveQueue, QueueEvent::kPodAdd);
  nominator_.add(std::move(pod), "");
  cv_.notify_all();
  return {};
}

kube::Expected<void> SchedulingQueue::addUnschedulableIfNotPresent(
    QueuedPodInfo info, std::int64_t pod_scheduling_cycle) {
  if (!info.pod)
    return nullPod("info.pod");
  std::lock_guard lock(mu_);
  const std::string key = info.pod->key();
  const auto present = [&](std::string_view where) {
    return kube::makeKubeError(
        fmt::format("pod {} is already present in the {} queue", key, where));
  };
  if (unschedulable_.contains(key))
    return present(kUnschedulableQueue);
  if (active_.contains(key))
    return present(kActiveQueue);
  if (backoff_.contains(key))
    return present(kBackoffQueue);

  info.timestamp = now();
  std::shared_ptr<const PodInfo> pod = info.pod;
  if (move_request_cycle_ >= pod_scheduling_cycle) {
    backoff_.addOrUpdate(std::move(info));
    incoming(kBackoffQueue, QueueEvent::kScheduleAttemptFailure);
  } else {
    putUnschedulable(key, std::move(info));
    incoming(kUnschedulableQueue, QueueEvent::kScheduleAttemptFailure);
  }
  nominator_.add(std::move(pod), "");
  return {};
}

std::int64_t SchedulingQueue::schedulingCycle() const {
  std::lock_guard lock(mu_);
  return scheduling_cycle_;
}

std::optional<QueuedPodInfo> SchedulingQueue::pop() {
  std::unique_lock lock(mu_);
  cv_.wait(lock, [&] { return !active_.empty() || closed_; });
  std::optional<QueuedPodInfo> info = active_.pop();
  if (!info)
    return std::nullopt;
  ++info->attempts;
  ++scheduling_cycle_;
  return info;
}

kube::Expected<void> SchedulingQueue::update(const std::shared_ptr<const PodInfo>& old_pod,
                                             std::shared_ptr<const PodInfo> new_pod) {
  if (!new_pod)
    return nullPod("newPod");
  const bool allowed = !pre_enqueue_ || pre_enqueue_(*new_pod);
  std::lock_guard lock(mu_);
  if (auto it = gated_.find(new_pod->key()); it != gated_.end()) {
    QueuedPodInfo updated = std::move(it->second);
    updated.pod = new_pod;
    if (!allowed) {
      it->second = std::move(updated);
      return {};
    }
    gated_.erase(it);
    active_.addOrUpdate(std::move(updated));
    incoming(kActiveQueue, QueueEvent::kPodUpdate);
    nominator_.add(std::move(new_pod), "");
    cv_.notify_all();
    return {};
  }
  const auto renominate = [&] {
    if (old_pod) {
      nominator_.update(*old_pod, new_pod);
    } else {
      nominator_.add(new_pod, "");
    }
  };

  if (old_pod) {
    const std::string old_key = old_pod->key();
    for (PodHeap* heap : {&active_, &backoff_}) {
      if (const QueuedPodInfo* queued = heap->get(old_key)) {
        QueuedPodInfo updated = *queued;
        updated.pod = new_pod;
        renominate();
        heap->addOrUpdate(std::move(updated));
        return {};
      }
    }
  }

  const std::string key = new_pod->key();
  if (auto it = unschedulable_.find(key); it != unschedulable_.end()) {
    renominate();
    QueuedPodInfo updated = it->second;
    updated.pod = new_pod;
    if (old_pod && !isPodUpdated(*old_pod, *new_pod)) {
      it->second = std::move(updated);
      return {};
    }
    (void)eraseUnschedulable(it);
    if (isBackingOff(updated)) {
      backoff_.addOrUpdate(std::move(updated));
    } else {
      active_.addOrUpdate(std::move(updated));
      cv_.notify_all();
    }
    return {};
  }

  active_.addOrUpdate(newQueuedPodInfo(new_pod));
  nominator_.add(std::move(new_pod), "");
  cv_.notify_all();
  return {};
}

void SchedulingQueue::remove(const PodInfo& pod) {
  std::lock_guard lock(mu_);
  nominator_.remove(pod);
  const std::string key = pod.key();
  if (!active_.erase(key)) {
    backoff_.erase(key);
    eraseUnschedulable(key);
    gated_.erase(key);
  }
}

void SchedulingQueue::assignedPodAdded(const PodInfo& pod) {
  std::lock_guard lock(mu_);
  movePodsToActiveOrBackoffQueue(unschedulablePodsWithMatchingAffinityTerm(pod),
                                 QueueEvent::kAssignedPodAdd);
}

void SchedulingQueue::assignedPodUpdated(const PodInfo& pod) {
  std::lock_guard lock(mu_);
  movePodsToActiveOrBackoffQueue(unschedulablePodsWithMatchingAffinityTerm(pod),
                                 QueueEvent::kAssignedPodUpdate);
}

void SchedulingQueue::moveAllToActiveOrBackoffQueue(QueueEvent event) {
  std::lock_guard lock(mu_);
  std::vector<std::string> keys;
  keys.reserve(unschedulable_.size());
  for (const auto& [key, info] : unschedulable_)
    keys.push_back(key);
  movePodsToActiveOrBackoffQueue(keys, event);
}

void SchedulingQueue::activate(const std::vector<std::string>& keys) {
  std::lock_guard lock(mu_);
  for (const std::string& key : keys) {
    if (auto it = unschedulable_.find(key); it != unschedulable_.end()) {
      active_.addOrUpdate(eraseUnschedulable(it));
    } else if (const QueuedPodInfo* info = backoff_.get(key)) {
      QueuedPodInfo moved = *info;
      backoff_.erase(key);
      active_.addOrUpdate(std::move(moved));
    } else {
      continue;
    }
    incoming(kActiveQueue, QueueEvent::kForceActivate);
  }
  // A pod of the list being scheduled right now must not be parked by its failure either.
  move_request_cycle_ = scheduling_cycle_;
  cv_.notify_all();
}

void SchedulingQueue::flushBackoffQCompleted() {
  std::lock_guard lock(mu_);
  const TimePoint t = now();
  bool moved = false;
  while (const QueuedPodInfo* head = backoff_.peek()) {
    if (backoffExpiry(*head) > t)
      break;
    active_.addOrUpdate(*backoff_.pop());
    incoming(kActiveQueue, QueueEvent::kBackoffComplete);
    moved = true;
  }
  if (moved)
    cv_.notify_all();
}

void SchedulingQueue::flushUnschedulableQLeftover() {
  std::lock_guard lock(mu_);
  const TimePoint t = now();
  std::vector<std::string> keys;
  for (const auto& [key, info] : unschedulable_) {
    if (t - info.timestamp > kUnschedulableQTimeInterval)
      keys.push_back(key);
  }
  if (!keys.empty())
    movePodsToActiveOrBackoffQueue(keys, QueueEvent::kUnschedulableTimeout);
}

void SchedulingQueue::movePodsToActiveOrBackoffQueue(const std::vector<std::string>& keys,
                                                     QueueEvent event) {
  for (const std::string& key : keys) {
    auto it = unschedulable_.find(key);
    if (it == unschedulable_.end())
      continue;
    QueuedPodInfo info = eraseUnschedulable(it);
    if (isBackingOff(info)) {
      backoff_.addOrUpdate(std::move(info));
      incoming(kBackoffQueue, event);
    } else {
      active_.addOrUpdate(std::move(info));
      incoming(kActiveQueue, event);
    }
  }
  // Even with nothing moved: a pod being scheduled right now may have failed on what this event
  // changed, so its failure must not park it in unschedulableQ.
  move_request_cycle_ = scheduling_cycle_;
  cv_.notify_all();
}

std::vector<std::string> SchedulingQueue::unschedulablePodsWithMatchingAffinityTerm(
    const PodInfo& pod) const {
  std::vector<std::string> keys;
  for (const auto& [key, info] : unschedulable_) {
    const PodInfo& waiting = *info.pod;
    for (const PodAffinityTerm& term : waiting.pod_affinity.required) {
      if (termMatches(term, waiting.namespace_, pod)) {
        keys.push_back(key);
        break;
      }
    }
  }
  return keys;
}

void SchedulingQueue::close() {
  std::lock_guard lock(mu_);
  closed_ = true;
  cv_.notify_all();
}

kube::Expected<void> SchedulingQueue::addNominatedPod(std::shared_ptr<const PodInfo> pod,
                                                      const std::string& node) {
  if (!pod)
    return nullPod("pod");
  std::lock_guard lock(mu_);
  nominator_.add(std::move(pod), node);
  return {};
}

void SchedulingQueue::deleteNominatedPodIfExists(const PodInfo& pod) {
  std::lock_guard lock(mu_);
  nominator_.remove(pod);
}

bool SchedulingQueue::hasNominatedPods() const {
  std::lock_guard lock(mu_);
  return !nominator_.empty();
}

std::vector<std::shared_ptr<const PodInfo>> SchedulingQueue::nominatedPodsForNode(
    std::string_view node) const {
  std::lock_guard lock(mu_);
  return nominator_.podsForNode(node);
}

std::vector<std::shared_ptr<const PodInfo>> SchedulingQueue::pendingPods() const {
  std::lock_guard lock(mu_);
  std::vector<std::shared_ptr<const PodInfo>> pods;
  pods.reserve(active_.size() + backoff_.size() + unschedulable_.size());
  active_.forEach([&](const QueuedPodInfo& info) { pods.push_back(info.pod); });
  backoff_.forEach([&](const QueuedPodInfo& info) { pods.push_back(info.pod); });
  for (const auto& [key, info] : unschedulable_)
    pods.push_back(info.pod);
  for (const auto& [key, info] : gated_)
    pods.push_back(info.pod);
  return pods;
}

QueueSizes SchedulingQueue::sizes() const {
  std::lock_guard lock(mu_);
  return QueueSizes{.active = active_.size(),
                    .backoff = backoff_.size(),
                    .unschedulable = unschedulable_.size(),
                    .gated = gated_.size()};
}

std::size_t SchedulingQueue::numUnschedulablePods() const {
  std::lock_guard lock(mu_);
  return unschedulable_.size();
}

}  // namespace koord::roles::scheduler
