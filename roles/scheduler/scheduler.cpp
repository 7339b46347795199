#include "scheduler.h"

#include <boost/json/value.hpp>

#include <algorithm>
#include <iterator>
#include <stdexcept>
#include <utility>
#include <variant>

#include <fmt/format.h>

#include "extender/http_extenders.h"
#include "framework/pod_changes.h"
#include "koord/apis/extension.h"
#include "koord/core/log.h"
#include "koord/core/metrics.h"
#include "reservation/reservation_status.h"

namespace koord::roles::scheduler {

namespace {

using SteadyClock = std::chrono::steady_clock;

double secondsSince(SteadyClock::time_point start) {
  return std::chrono::duration<double>(SteadyClock::now() - start).count();
}

// What kube-scheduler's nodeSchedulingPropertiesChange looks at: a change elsewhere (status
// heartbeats, images) cannot make an unschedulable pod fit, so it moves nothing.
QueueEvent nodeChangeEvent(const Node& a, const Node& b) {
  if (a.unschedulable != b.unschedulable)
    return QueueEvent::kNodeSpecUnschedulableChange;
  if (!(a.allocatable == b.allocatable))
    return QueueEvent::kNodeAllocatableChange;
  if (a.labels != b.labels)
    return QueueEvent::kNodeLabelChange;
  if (a.taints != b.taints)
    return QueueEvent::kNodeTaintChange;
  return QueueEvent::kUnknown;
}

void logIfError(const kube::Expected<void>& r, std::string_view what, const std::string& key) {
  if (!r)
    KOORD_LOG_ERROR("scheduler: {} {}: {}", what, key, r.error().message);
}

}  // namespace

Scheduler::Scheduler(const config::SchedulerConfig& config, const PluginRegistry& registry,
                     SchedulerApi& api, metrics::Registry& metrics)
    : api_(api), metrics_(metrics), parallelizer_(config.parallelism) {
  for (const auto& p : config.profiles) {
    auto fw = Framework::create(p, registry, api_, parallelizer_, &metrics);
    if (!fw)
      throw std::invalid_argument(fw.error().message);
    const auto percentage =
        p.percentage_of_nodes_to_score.value_or(config.percentage_of_nodes_to_score);
    Profile profile;
    profile.name = p.scheduler_name;
    profile.framework = std::move(*fw);
    profile.algorithm = std::make_unique<PodScheduler>(*profile.framework, percentage);
    for (const auto& plugin : profile.framework->allPlugins()) {
      if (auto* l = dynamic_cast<AssignedPodListener*>(plugin.get()))
        listeners_.push_back(l);
      if (auto* l = dynamic_cast<ReservationListener*>(plugin.get()))
        reservation_listeners_.push_back(l);
      if (auto* l = dynamic_cast<PodListener*>(plugin.get()))
        pod_listeners_.push_back(l);
      if (auto* l = dynamic_cast<NodeListener*>(plugin.get()))
        node_listeners_.push_back(l);
      if (auto* c = dynamic_cast<PluginController*>(plugin.get()))
        controllers_.push_back(c);
    }
    profiles_.push_back(std::move(profile));
  }
  if (profiles_.empty())
    throw std::invalid_argument("the configuration has no profile");
  if (!config.extenders.empty()) {
    HttpExtendersOptions options;
    options.fetch_pod = [this](const PodInfo& pod) { return api_.getPod(pod); };
    extenders_ = std::make_unique<HttpExtenders>(config.extenders, std::move(options));
    for (auto& p : profiles_) {
      p.framework->setExtenders(extenders_.get());
      p.algorithm->setExtenders(extenders_.get());
    }
  }
  // All profiles share one queue; kube-scheduler refuses profiles with different QueueSort
  // plugins, which config validation already did.
  const Framework* first = profiles_.front().framework.get();
  SchedulingQueueOptions qo;
  qo.pod_initial_backoff = std::chrono::seconds(config.pod_initial_backoff_seconds);
  qo.pod_max_backoff = std::chrono::seconds(config.pod_max_backoff_seconds);
  qo.on_incoming = [this](std::string_view queue, QueueEvent event) {
    metrics_.incomingPod(queue, event);
  };
  qo.on_unschedulable = [this](const QueuedPodInfo& info, int delta) {
    metrics_.unschedulablePods(info.unschedulable_plugins, info.pod->scheduler_name, delta);
  };
  // A pod is gated by the PreEnqueue plugins of the profile that schedules it.
  bool any_pre_enqueue = false;
  for (const auto& p : profiles_)
    any_pre_enqueue |= p.framework->hasPreEnqueuePlugins();
  if (any_pre_enqueue) {
    qo.pre_enqueue = [this](const PodInfo& pod) {
      for (const auto& p : profiles_) {
        if (p.name == pod.scheduler_name)
          return p.framework->runPreEnqueuePlugins(pod).ok();
      }
      return true;
    };
  }
  qo.sort_handle = [first](const PodInfo& pod) { return first->queueSortHandle(pod); };
  auto queue = SchedulingQueue::create(
      [first](const QueuedPodInfo& a, const QueuedPodInfo& b) {
        return first->queueSortLess(a, b);
      },
      std::move(qo));
  if (!queue)
    throw std::invalid_argument(queue.error().message);
  queue_ = std::move(*queue);
  for (auto& p : profiles_)
    p.framework->setQueueHooks(
        [this](const std::vector<std::string>& keys) { queue_->activate(keys); },
        [this] { queue_->moveAllToActiveOrBackoffQueue(QueueEvent::kUnknown); });
}

Scheduler::~Scheduler() {
  stop();
}

void Scheduler::setPluginMetricsSamplePercent(int percent) {
  for (auto& p : profiles_)
    p.framework->setPluginMetricsSamplePercent(percent);
}

bool Scheduler::responsibleFor(const std::string& scheduler_name) const {
  for (const auto& p : profiles_) {
    if (p.name == scheduler_name)
      return true;
  }
  return false;
}

Plugin* Scheduler::findPlugin(std::string_view name) const {
  for (const auto& p : profiles_) {
    for (const auto& plugin : p.framework->allPlugins()) {
      if (plugin->name() == name)
        return plugin.get();
    }
  }
  return nullptr;
}

Scheduler::Profile* Scheduler::profileFor(const std::string& scheduler_name) {
  for (auto& p : profiles_) {
    if (p.name == scheduler_name)
      return &p;
  }
  return nullptr;
}

// ---- informer events ----

void Scheduler::onPodAdd(const PodInfo& pod) {
  for (auto* l : pod_listeners_)
    l->onPodAdd(pod);
}

void Scheduler::onPodUpdate(const PodInfo& old_pod, const PodInfo& pod) {
  for (auto* l : pod_listeners_)
    l->onPodUpdate(old_pod, pod);
}

void Scheduler::onPodDelete(const PodInfo& pod) {
  for (auto* l : pod_listeners_)
    l->onPodDelete(pod);
}

void Scheduler::onPendingPodAdd(std::shared_ptr<const PodInfo> pod) {
  const std::string key = pod->key();
  logIfError(queue_->add(std::move(pod)), "queueing", key);
}

void Scheduler::onPendingPodUpdate(const PodInfo& old_pod, std::shared_ptr<const PodInfo> pod) {
  // An assumed pod's own updates (its binding racing the informer) must not put it back.
  if (cache_.isAssumedPod(pod->uid))
    return;
  const std::string key = pod->key();
  // The queue compares but does not keep the old version: a non-owning pointer is enough.
  std::shared_ptr<const PodInfo> old(std::shared_ptr<const PodInfo>(), &old_pod);
  logIfError(queue_->update(old, std::move(pod)), "requeueing", key);
}

void Scheduler::onPendingPodDelete(const PodInfo& pod) {
  queue_->remove(pod);
  // A pod deleted while held at Permit gives its room back now, not at its timeout.
  for (auto& profile : profiles_)
    profile.framework->waitingPods()->reject(pod.uid, "", "removed");
}

void Scheduler::onAssignedPodAdd(std::shared_ptr<const PodInfo> pod) {
  for (auto* l : listeners_)
    l->onAssignedPodAdd(*pod);
  const PodInfo& p = *pod;
  logIfError(cache_.addPod(pod), "caching", p.key());
  queue_->assignedPodAdded(p);
  if (!p.reservation_uid.empty() && owner_hook_)
    owner_hook_();
}

void Scheduler::onAssignedPodUpdate(const PodInfo& old_pod, std::shared_ptr<const PodInfo> pod) {
  for (auto* l : listeners_)
    l->onAssignedPodUpdate(old_pod, *pod);
  const PodInfo& p = *pod;
  logIfError(cache_.updatePod(old_pod, pod), "updating cached", p.key());
  queue_->assignedPodUpdated(p);
}

void Scheduler::onAssignedPodDelete(const PodInfo& pod) {
  for (auto* l : listeners_)
    l->onAssignedPodDelete(pod);
  logIfError(cache_.removePod(pod), "removing cached", pod.key());
  queue_->moveAllToActiveOrBackoffQueue(QueueEvent::kAssignedPodDelete);
}

void Scheduler::onNodeAdd(std::shared_ptr<const Node> node) {
  const std::string name = node->name;
  for (auto* l : node_listeners_)
    l->onNodeAdd(*node);
  logIfError(cache_.addNode(std::move(node)), "caching node", name);
  queue_->moveAllToActiveOrBackoffQueue(QueueEvent::kNodeAdd);
}

void Scheduler::onNodeUpdate(const Node& old_node, std::shared_ptr<const Node> node) {
  const QueueEvent event = nodeChangeEvent(old_node, *node);
  for (auto* l : node_listeners_)
    l->onNodeUpdate(old_node, *node);
  const std::string name = node->name;
  logIfError(cache_.updateNode(std::move(node)), "updating cached node", name);
  if (event != QueueEvent::kUnknown)
    queue_->moveAllToActiveOrBackoffQueue(event);
}

void Scheduler::onNodeDelete(const Node& node) {
  for (auto* l : node_listeners_)
    l->onNodeDelete(node);
  logIfError(cache_.removeNode(node.name), "removing cached node", node.name);
}

void Scheduler::onNodeObject(const std::string& kind, const std::string& node,
                             std::function<void(NodeInfo&)> attach, bool added) {
  logIfError(cache_.setNodeObject(kind, node, std::move(attach)), "caching the node object of",
             node);
  // A first report (a NodeMetric) can make a node usable for LoadAware; later ones come every
  // minute from every node, and the unschedulable pods' own timeout retries them anyway.
  if (added)
    queue_->moveAllToActiveOrBackoffQueue(QueueEvent::kNodeAllocatableChange);
}

void Scheduler::onNodeObjectDelete(const std::string& kind, const std::string& node,
                                   std::function<void(NodeInfo&)> detach) {
  logIfError(cache_.removeNodeObject(kind, node, detach), "dropping the node object of", node);
}

// ---- reservations ----

bool Scheduler::queuesReservation(const ReservationState& r) const {
  const apis::Reservation& o = *r.object;
  return !o.terminating && o.phase == apis::ReservationPhase::kPending && o.node_name.empty() &&
         responsibleFor(r.reserve_pod->scheduler_name);
}

void Scheduler::onReservationAdd(std::shared_ptr<const ReservationState> r) {
  const std::string& name = r->object->name;
  if (queuesReservation(*r) && !cache_.isAssumedPod(r->object->uid))
    logIfError(queue_->add(r->reserve_pod), "queueing reservation", name);
  if (auto info = reservationInfoOf(*r)) {
    logIfError(cache_.addReservation(std::move(info)), "caching reservation", name);
    for (auto* l : reservation_listeners_)
      l->onReservationAvailable(r);
    // Owner pods that found no room may fit in it now.
    queue_->moveAllToActiveOrBackoffQueue(QueueEvent::kAssignedPodAdd);
  }
}

void Scheduler::onReservationUpdate(const ReservationState& old_r,
                                    std::shared_ptr<const ReservationState> r) {
  const std::string& name = r->object->name;
  const bool was_queued = queuesReservation(old_r);
  const bool queued = queuesReservation(*r) && !cache_.isAssumedPod(r->object->uid);
  if (was_queued && queued) {
    std::shared_ptr<const PodInfo> old(std::shared_ptr<const PodInfo>(), old_r.reserve_pod.get());
    logIfError(queue_->update(old, r->reserve_pod), "requeueing reservation", name);
  } else if (queued) {
    logIfError(queue_->add(r->reserve_pod), "queueing reservation", name);
  } else if (was_queued) {
    queue_->remove(*old_r.reserve_pod);
  }
  if (auto info = reservationInfoOf(*r)) {
    logIfError(cache_.addReservation(std::move(info)), "caching reservation", name);
    for (auto* l : reservation_listeners_)
      l->onReservationAvailable(r);
    if (!old_r.object->available())
      queue_->moveAllToActiveOrBackoffQueue(QueueEvent::kAssignedPodAdd);
  } else if (old_r.object->available()) {
    cache_.removeReservation(r->object->uid);
    for (auto* l : reservation_listeners_)
      l->onReservationGone(r->object->uid);
    // Its room is free for every pod again.
    queue_->moveAllToActiveOrBackoffQueue(QueueEvent::kAssignedPodDelete);
  }
}

void Scheduler::onReservationDelete(const ReservationState& r) {
  if (queuesReservation(r))
    queue_->remove(*r.reserve_pod);
  {
    std::lock_guard lock(reservation_failures_mu_);
    reservation_failures_.erase(r.object->uid);
  }
  cache_.removeReservation(r.object->uid);
  for (auto* l : reservation_listeners_)
    l->onReservationGone(r.object->uid);
  if (r.object->available())
    queue_->moveAllToActiveOrBackoffQueue(QueueEvent::kAssignedPodDelete);
}

// ---- the loop ----

void Scheduler::start() {
  if (thread_.joinable())
    return;
  for (auto* c : controllers_)
    c->startController();
  controllers_started_ = true;
  thread_ = std::thread([this] {
    while (scheduleOne()) {
    }
  });
  housekeeper_ = std::thread([this] {
    while (!stopping_.load()) {
      for (int i = 0; i < 10 && !stopping_.load(); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      if (!stopping_.load())
        housekeeping(SteadyClock::now());
    }
  });
}

void Scheduler::stop() {
  stopping_ = true;
  queue_->close();
  if (thread_.joinable())
    thread_.join();
  if (housekeeper_.joinable())
    housekeeper_.join();
  if (controllers_started_) {
    for (auto* c : controllers_)
      c->stopController();
    controllers_started_ = false;
  }
}

void Scheduler::housekeeping(SteadyClock::time_point now) {
  queue_->flushBackoffQCompleted();
  if (now - last_leftover_flush_ >= kUnschedulableQFlushPeriod) {
    queue_->flushUnschedulableQLeftover();
    last_leftover_flush_ = now;
  }
  auto expired = cache_.cleanupAssumedPods(now);
  if (!expired)
    KOORD_LOG_ERROR("scheduler: expiring assumed pods: {}", expired.error().message);
  else if (*expired > 0)
    KOORD_LOG_WARNING("scheduler: {} assumed pod(s) expired without the informer confirming them",
                      *expired);
  metrics_.queueSizes(queue_->sizes());
  metrics_.cacheSizes(cache_.counts());
}

bool Scheduler::scheduleOne() {
  auto next = queue_->pop();
  if (!next)
    return false;
  const std::int64_t cycle = queue_->schedulingCycle();
  QueuedPodInfo info = std::move(*next);
  // What refused the pod last time: this attempt's failure, if any, says it anew.
  info.unschedulable_plugins.clear();
  const PodInfo& pod = *info.pod;
  Profile* profile = profileFor(pod.scheduler_name);
  if (profile == nullptr) {
    // The informer only queues pods of our profiles; a pod that changed schedulerName since
    // is not ours any more.
    KOORD_LOG_ERROR("scheduler: {} names scheduler {} that no profile has", pod.key(),
                    pod.scheduler_name);
    return true;
  }
  // A pod being deleted, or one already assumed (its binding in flight), is not scheduled.
  if (pod.terminating || cache_.isAssumedPod(pod.uid))
    return true;

  const auto start = SteadyClock::now();
  cache_.updateSnapshot(snapshot_);
  Framework& fw = *profile->framework;
  fw.setSnapshot(&snapshot_);
  auto state = std::make_shared<CycleState>();
  // Nodes a BeforePreFilter transformer replaced for this pod (an owner pod sees its
  // reservations' room as free) get their cache version back once the cycle is decided.
  struct RestoreNodes {
    Snapshot& snapshot;
    std::vector<std::shared_ptr<const NodeInfo>>& replaced;
    ~RestoreNodes() {
      for (auto& original : replaced)
        snapshot.replace(std::move(original));
      replaced.clear();
    }
  } restore{snapshot_, replaced_};
  replacements_.clear();
  if (auto s = fw.runPreFilterTransformers(*state, pod, snapshot_, replacements_); !s.ok()) {
    const bool rejected = s.isUnschedulable();
    metrics_.attempt(rejected ? AttemptResult::kUnschedulable : AttemptResult::kError,
                     profile->name, secondsSince(start));
    failed(*profile, std::move(info), cycle,
           rejected ? kReasonUnschedulable : kReasonSchedulerError, s.message(), "");
    return true;
  }
  for (auto& replacement : replacements_) {
    const NodeInfo* original = snapshot_.get(replacement->name());
    if (original == nullptr)
      continue;
    auto kept = cache_.nodeInfo(replacement->name());
    if (kept.get() != original)
      continue;  // the cache moved on; this cycle keeps the snapshot's own
    if (snapshot_.replace(std::move(replacement)))
      replaced_.push_back(std::move(kept));
  }
  auto outcome = profile->algorithm->schedule(*state, pod, snapshot_);
  metrics_.algorithmDuration(secondsSince(start));

  if (auto* fit = std::get_if<FitError>(&outcome)) {
    std::string nominated;
    // Also after a PreFilter refusal, as kube-scheduler: a gang's PostFilter rejects the
    // gang's waiting members whichever point refused this one.
    if (fw.hasPostFilterPlugins()) {
      metrics_.preemptionAttempt();
      PostFilterResult result;
      auto s = fw.runPostFilterPlugins(*state, pod, fit->statuses, result);
      if (s.ok())
        nominated = result.nominated_node_name;
      else if (s.code() == Code::kError)
        KOORD_LOG_ERROR("scheduler: preemption for {}: {}", pod.key(), s.message());
    }
    metrics_.attempt(AttemptResult::kUnschedulable, profile->name, secondsSince(start));
    info.unschedulable_plugins = fit->unschedulablePlugins();
    failed(*profile, std::move(info), cycle, kReasonUnschedulable, fit->message(), nominated);
    return true;
  }
  if (auto* err = std::get_if<Status>(&outcome)) {
    metrics_.attempt(AttemptResult::kError, profile->name, secondsSince(start));
    failed(*profile, std::move(info), cycle, kReasonSchedulerError, err->message(), "");
    return true;
  }
  const std::string node = std::get<ScheduleResult>(outcome).node;

  // Assume: the pod counts on its node from now on, so the next cycle does not pick the same
  // room while the binding is in flight.
  auto assumed = std::make_shared<PodInfo>(pod);
  assumed->node_name = node;
  auto reserve = fw.runReservePlugins(*state, *assumed, node);
  if (!reserve.ok()) {
    fw.runUnreservePlugins(*state, *assumed, node);
    metrics_.attempt(AttemptResult::kError, profile->name, secondsSince(start));
    failed(*profile, std::move(info), cycle, kReasonSchedulerError, reserve.message(), "");
    return true;
  }
  // The plugins' changes to the pod (reservation-allocated, ...) are the assumed pod's too: the
  // cache counts an owner pod inside its reservation from now on.
  if (const PodChanges* changes = findPodChanges(*state))
    changes->applyTo(*assumed);
  if (auto r = cache_.assumePod(assumed); !r) {
    fw.runUnreservePlugins(*state, *assumed, node);
    metrics_.attempt(AttemptResult::kError, profile->name, secondsSince(start));
    failed(*profile, std::move(info), cycle, kReasonSchedulerError, r.error().message, "");
    return true;
  }
  // A nominated pod that got a node is no longer holding room elsewhere.
  queue_->deleteNominatedPodIfExists(pod);

  std::vector<PluginWait> waits;
  auto permit = fw.runPermitPlugins(*state, *assumed, node, waits);
  if (permit.code() == Code::kWait) {
    // Held with its room assumed until the waiting plugins decide (a gang's last member allows
    // its siblings from its own Permit, on this thread); binding or the failure path follows.
    fw.waitingPods()->add(
        assumed, node, waits,
        [this, profile, state = std::move(state), info = std::move(info), assumed, cycle, start,
         wait_start = SteadyClock::now()](Status decided) mutable {
          metrics_.permitWaitDuration(decided, secondsSince(wait_start));
          if (decided.ok())
            continueBinding(*profile, std::move(state), std::move(info), assumed, cycle, start);
          else
            permitRejected(*profile, *state, std::move(info), assumed, cycle, start, decided);
        });
    return true;
  }
  if (!permit.ok()) {
    fw.runUnreservePlugins(*state, *assumed, node);
    logIfError(cache_.forgetPod(*assumed), "forgetting", assumed->key());
    const bool rejected = permit.isUnschedulable();
    metrics_.attempt(rejected ? AttemptResult::kUnschedulable : AttemptResult::kError,
                     profile->name, secondsSince(start));
    if (rejected && !permit.plugin().empty())
      info.unschedulable_plugins = {permit.plugin()};
    failed(*profile, std::move(info), cycle,
           rejected ? kReasonUnschedulable : kReasonSchedulerError, permit.message(), "");
    return true;
  }
  continueBinding(*profile, std::move(state), std::move(info), std::move(assumed), cycle, start);
  return true;
}

void Scheduler::continueBinding(Profile& profile, std::shared_ptr<CycleState> state,
                                QueuedPodInfo info, std::shared_ptr<const PodInfo> assumed,
                                std::int64_t cycle, SteadyClock::time_point start) {
  if (assumed->reserve_pod)
    bindReservationAsync(profile, std::move(state), std::move(info), std::move(assumed), cycle,
                         start);
  else
    bindAsync(profile, std::move(state), std::move(info), std::move(assumed), cycle, start);
}

void Scheduler::permitRejected(Profile& profile, CycleState& state, QueuedPodInfo info,
                               const std::shared_ptr<const PodInfo>& assumed, std::int64_t cycle,
                               SteadyClock::time_point start, const Status& status) {
  Framework& fw = *profile.framework;
  fw.runUnreservePlugins(state, *assumed, assumed->node_name);
  if (auto forgot = cache_.forgetPod(*assumed); !forgot)
    logIfError(forgot, "forgetting", assumed->key());
  else
    queue_->moveAllToActiveOrBackoffQueue(QueueEvent::kAssignedPodDelete);
  metrics_.attempt(AttemptResult::kUnschedulable, profile.name, secondsSince(start));
  if (!status.plugin().empty())
    info.unschedulable_plugins = {status.plugin()};
  failed(profile, std::move(info), cycle, kReasonUnschedulable, status.message(), "");
}

void Scheduler::bindingFailed(Profile& profile, CycleState& state, QueuedPodInfo info,
                              const std::shared_ptr<const PodInfo>& assumed, std::int64_t cycle,
                              SteadyClock::time_point start, const std::string& message) {
  Framework& fw = *profile.framework;
  const std::string& node = assumed->node_name;
  // A 409 (bound already, or gone) lands here too: forgetting the assumed pod is what matters;
  // the informer then shows where it really is.
  fw.runUnreservePlugins(state, *assumed, node);
  if (auto forgot = cache_.forgetPod(*assumed); !forgot) {
    logIfError(forgot, "forgetting", assumed->key());
  } else {
    // The room the assumed pod held is free again, as if a bound pod had gone (kube-scheduler
    // does this from 1.22 on): pods it kept out are retried, and this one, failing after the
    // move, backs off instead of waiting in unschedulableQ for up to a minute, however often
    // its binding fails.
    queue_->moveAllToActiveOrBackoffQueue(QueueEvent::kAssignedPodDelete);
  }
  metrics_.attempt(AttemptResult::kError, profile.name, secondsSince(start));
  failed(profile, std::move(info), cycle, kReasonSchedulerError,
         fmt::format("binding rejected: {}", message), "");
}

void Scheduler::bindReservationAsync(Profile& profile, std::shared_ptr<CycleState> state,
                                     QueuedPodInfo info, std::shared_ptr<const PodInfo> assumed,
                                     std::int64_t cycle, SteadyClock::time_point start) {
  auto current = api_.currentReservation(assumed->name);
  if (!current || current->object->uid != assumed->uid) {
    bindingFailed(profile, *state, std::move(info), assumed, cycle, start,
                  "the reservation is gone");
    return;
  }
  ++bindings_in_flight_;
  const auto bind_start = SteadyClock::now();
  // The CPUs and devices plugins reserved go on the Reservation before it turns Available, so
  // that the informer never shows it holding room without them.
  boost::json::object annotations;
  if (const PodChanges* changes = findPodChanges(*state)) {
    for (const auto& [key, value] : changes->annotations()) {
      if (std::find(std::begin(apis::kSchedulerOwnedPodAnnotations),
                    std::end(apis::kSchedulerOwnedPodAnnotations),
                    key) != std::end(apis::kSchedulerOwnedPodAnnotations))
        annotations[key] = value;
    }
  }
  if (annotations.empty()) {
    markReservationAvailable(profile, std::move(state), std::move(info), std::move(assumed),
                             std::move(current), cycle, start, bind_start);
    return;
  }
  auto object = current->object;
  api_.patchReservation(
      *object, boost::json::object{{"metadata", {{"annotations", std::move(annotations)}}}},
      [this, &profile, state = std::move(state), info = std::move(info),
       assumed = std::move(assumed), current = std::move(current), cycle, start,
       bind_start](kube::Expected<void> r) mutable {
        if (!r) {
          bindingFailed(profile, *state, std::move(info), assumed, cycle, start, r.error().message);
          --bindings_in_flight_;
          return;
        }
        markReservationAvailable(profile, std::move(state), std::move(info), std::move(assumed),
                                 std::move(current), cycle, start, bind_start);
      });
}

void Scheduler::markReservationAvailable(Profile& profile, std::shared_ptr<CycleState> state,
                                         QueuedPodInfo info, std::shared_ptr<const PodInfo> assumed,
                                         std::shared_ptr<const ReservationState> current,
                                         std::int64_t cycle, SteadyClock::time_point start,
                                         SteadyClock::time_point bind_start) {
  const std::string node = assumed->node_name;
  auto patch = reservation::availablePatch(*current, node, std::chrono::system_clock::now());
  api_.patchReservationStatus(
      *current->object, std::move(patch),
      [this, &profile, state, info = std::move(info), assumed, current, cycle, start,
       bind_start](kube::Expected<void> r) mutable {
        if (!r) {
          bindingFailed(profile, *state, std::move(info), assumed, cycle, start, r.error().message);
        } else {
          cache_.finishBinding(*assumed, SteadyClock::now());
          metrics_.bindingDuration(secondsSince(bind_start));
          metrics_.attempt(AttemptResult::kScheduled, profile.name, secondsSince(start));
          metrics_.reservationScheduled(secondsSince(info.initial_attempt_timestamp));
          {
            std::lock_guard lock(reservation_failures_mu_);
            reservation_failures_.erase(assumed->uid);
          }
          api_.reservationEvent(*current->object, profile.name, false, "Scheduled",
                                fmt::format("Successfully assigned reservation {} to {}",
                                            assumed->name, assumed->node_name));
        }
        --bindings_in_flight_;
      });
}

void Scheduler::bindAsync(Profile& profile, std::shared_ptr<CycleState> state, QueuedPodInfo info,
                          std::shared_ptr<const PodInfo> assumed, std::int64_t cycle,
                          SteadyClock::time_point start) {
  ++bindings_in_flight_;
  const auto bind_start = SteadyClock::now();
  const std::string node = assumed->node_name;
  Framework& fw = *profile.framework;
  fw.runPreBindAndBind(
      state, assumed, node,
      [this, &profile, state, info = std::move(info), assumed, cycle, start,
       bind_start](Status s) mutable {
        Framework& fw = *profile.framework;
        const std::string& node = assumed->node_name;
        if (!s.ok()) {
          bindingFailed(profile, *state, std::move(info), assumed, cycle, start, s.message());
        } else {
          cache_.finishBinding(*assumed, SteadyClock::now());
          metrics_.bindingDuration(secondsSince(bind_start));
          metrics_.attempt(AttemptResult::kScheduled, profile.name, secondsSince(start));
          metrics_.podScheduled(info.attempts, secondsSince(info.initial_attempt_timestamp));
          api_.reportScheduled(*assumed, node, profile.name);
          fw.runPostBindPlugins(*state, *assumed, node);
        }
        --bindings_in_flight_;
      });
}

void Scheduler::reservationFailed(Profile& profile, QueuedPodInfo info, std::int64_t cycle,
                                  const std::string& message) {
  const std::string& name = info.pod->name;
  KOORD_LOG_INFO("scheduler: unable to schedule reservation {}: {}", name, message);
  metrics_.reservationUnschedulable();
  // Requeue it as the informer has it now: gone, placed or finished meanwhile, it needs nothing.
  auto current = api_.currentReservation(name);
  if (!current || current->object->uid != info.pod->uid || !queuesReservation(*current))
    return;
  info.pod = current->reserve_pod;
  if (auto r = queue_->addUnschedulableIfNotPresent(info, cycle); !r)
    KOORD_LOG_ERROR("scheduler: requeueing reservation {}: {}", name, r.error().message);
  {
    std::lock_guard lock(reservation_failures_mu_);
    auto& last = reservation_failures_[current->object->uid];
    if (last == message)
      return;
    last = message;
  }
  api_.reservationEvent(*current->object, profile.name, true, "FailedScheduling", message);
  api_.patchReservationStatus(
      *current->object,
      reservation::unschedulablePatch(*current->object, message, std::chrono::system_clock::now()),
      [name](kube::Expected<void> r) {
        if (!r)
          KOORD_LOG_ERROR("scheduler: recording why reservation {} is unschedulable: {}", name,
                          r.error().message);
      });
}

void Scheduler::failed(Profile& profile, QueuedPodInfo info, std::int64_t cycle,
                       std::string_view reason, const std::string& message,
                       const std::string& nominated_node) {
  if (info.pod->reserve_pod) {
    reservationFailed(profile, std::move(info), cycle, message);
    return;
  }
  const std::string key = info.pod->key();
  KOORD_LOG_INFO("scheduler: unable to schedule {}: {}: {}", key, reason, message);
  // Requeue the pod as the informer has it now: gone or bound meanwhile, it needs nothing more.
  auto current = api_.currentPod(key);
  if (!current || current->uid != info.pod->uid) {
    queue_->deleteNominatedPodIfExists(*info.pod);
    return;
  }
  if (current->assigned())
    return;
  info.pod = current;
  if (auto r = queue_->addUnschedulableIfNotPresent(info, cycle); !r)
    KOORD_LOG_ERROR("scheduler: requeueing {}: {}", key, r.error().message);
  if (!nominated_node.empty())
    logIfError(queue_->addNominatedPod(current, nominated_node), "nominating", key);
  api_.reportFailure(*current, profile.name, reason, message, nominated_node);
}

}  // namespace koord::roles::scheduler
