#include "controllers/migration/controller.h"

#include <boost/json.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <random>

#include "koord/core/log.h"
#include "koord/kube/discovery.h"
#include "koord/kube/event_recorder.h"
#include "koord/kube/informer.h"
#include "koord/kube/json_fields.h"
#include "koord/kube/rest_client.h"

namespace koord::roles::descheduler::migration {

namespace {

namespace json = boost::json;
namespace jf = kube::jsonfields;
using apis::PodMigrationJobMode;
using apis::PodMigrationJobPhase;
using Clock = std::chrono::system_clock;

// Index of the jobs informer: an active job's pod UID.
constexpr const char* kActiveJobPodIndex = "activeJobPodUID";

kube::ResourceRef jobsRef(std::string name = {}) {
  return {std::string(apis::kReservationGroup),
          std::string(apis::kReservationVersion),
          std::string(apis::kPodMigrationJobResource),
          "",
          std::move(name),
          ""};
}

kube::ResourceRef reservationsRef(std::string name = {}) {
  return {std::string(apis::kReservationGroup),
          std::string(apis::kReservationVersion),
          std::string(apis::kReservationResource),
          "",
          std::move(name),
          ""};
}

kube::ResourceRef podRef(const apis::ObjectReference& ref) {
  return {"", "v1", "pods", ref.namespace_, ref.name, ""};
}

void setCondition(apis::PodMigrationJobStatus& status, std::string_view type,
                  std::string_view value, std::string_view reason, std::string message) {
  const auto now = Clock::now();
  for (auto& c : status.conditions) {
    if (c.type != type)
      continue;
    if (c.status != value)
      c.last_transition_time = now;
    c.status = std::string(value);
    c.reason = std::string(reason);
    c.message = std::move(message);
    c.last_probe_time = now;
    return;
  }
  status.conditions.push_back(
      {std::string(type), std::string(value), std::string(reason), std::move(message), now, now});
}

// A random (version 4) UUID: Koordinator names the jobs it creates so.
std::string newUuid() {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  const std::uint64_t hi = (rng() & 0xffffffffffff0fffULL) | 0x4000ULL;
  const std::uint64_t lo = (rng() & 0x3fffffffffffffffULL) | 0x8000000000000000ULL;
  return fmt::format("{:08x}-{:04x}-{:04x}-{:04x}-{:012x}", hi >> 32, (hi >> 16) & 0xffff,
                     hi & 0xffff, lo >> 48, lo & 0xffffffffffffULL);
}

const json::object* objectAt(const json::value& v, std::string_view key) {
  const auto* o = v.if_object();
  const auto* field = o != nullptr ? o->if_contains(key) : nullptr;
  return field != nullptr ? field->if_object() : nullptr;
}

std::string stringAt(const json::object* o, std::string_view key) {
  const auto* field = o != nullptr ? o->if_contains(key) : nullptr;
  return field != nullptr && field->is_string() ? std::string(field->get_string()) : std::string();
}

std::string uidOf(const json::value& object) {
  return stringAt(objectAt(object, "metadata"), "uid");
}

// The pod the job names is gone: none of that name, or one recreated under it.
bool podReplaced(const apis::PodMigrationJob& job, const json::value& pod) {
  return !job.pod_ref->uid.empty() && uidOf(pod) != job.pod_ref->uid;
}

std::string_view conditionReason(const apis::PodMigrationJobStatus& status, std::string_view type) {
  for (const auto& c : status.conditions) {
    if (c.type == type)
      return c.reason;
  }
  return {};
}

std::string nodeNameOf(const json::value& pod) {
  return stringAt(objectAt(pod, "spec"), "nodeName");
}

std::string labelOf(const json::value& pod, std::string_view key) {
  const auto* meta = objectAt(pod, "metadata");
  const auto* labels = meta != nullptr ? meta->if_contains("labels") : nullptr;
  return stringAt(labels != nullptr ? labels->if_object() : nullptr, key);
}

// Koordinator's GetEvictionTriggerAndReason: the evict-reason annotation, else the trigger, else
// "NotSet"; the eviction's Event and the job's message both say it.
std::string evictReason(const apis::PodMigrationJob& job) {
  auto it = job.annotations.find(apis::kAnnotationEvictReason);
  if (it != job.annotations.end() && !it->second.empty())
    return it->second;
  it = job.annotations.find(apis::kAnnotationEvictTrigger);
  return it != job.annotations.end() && !it->second.empty() ? it->second : "NotSet";
}

bool conditionTrue(const apis::PodMigrationJobStatus& status, std::string_view type) {
  for (const auto& c : status.conditions) {
    if (c.type == type)
      return c.status == "True";
  }
  return false;
}

// The Reservation's Scheduled=False/Unschedulable, as the scheduler writes it for one it cannot
// place.
bool unschedulable(const apis::Reservation& r) {
  for (const auto& c : r.conditions) {
    if (c.type == "Scheduled" && c.status == "False" && c.reason == "Unschedulable")
      return true;
  }
  return false;
}

}  // namespace

struct MigrationJobController::Informers {
  Informers(ClusterServices& c)
      : discovery(c.reader, c.io, "PodMigrationJob API",
                  [](kube::RestClient& client, kube::VersionCallback done) {
                    kube::servedVersionOf(client, std::string(apis::kReservationGroup),
                                          std::string(apis::kPodMigrationJobResource),
                                          {std::string(apis::kReservationVersion)},
                                          std::move(done));
                  }) {}
  kube::DiscoveryRetry discovery;
  std::mutex mu;
  bool answered = false;                                            // under mu
  std::unique_ptr<kube::Informer<apis::PodMigrationJob>> jobs;      // under mu, set once
  std::unique_ptr<kube::Informer<apis::Reservation>> reservations;  // under mu, set once
};

MigrationJobController::MigrationJobController(std::shared_ptr<const MigrationControllerArgs> args,
                                               ClusterServices& cluster, metrics::Registry& metrics)
    : args_(std::move(args)),
      cluster_(cluster),
      limits_(*args_),
      arbitrator_(*args_, limits_),
      evict_rate_(args_->evict_qps, args_->evict_burst),
      jobs_by_phase_(metrics.gauge("koord_descheduler_migration_jobs",
                                   "PodMigrationJobs the MigrationController knows, by phase.",
                                   {"phase"})),
      informers_(std::make_unique<Informers>(cluster)) {}

MigrationJobController::~MigrationJobController() {
  stop();
}

void MigrationJobController::start() {
  informers_->discovery.start([this](std::optional<std::string> version) {
    std::lock_guard lock(informers_->mu);
    informers_->answered = true;
    if (!version) {
      KOORD_LOG_WARNING(
          "descheduler: the API server serves no PodMigrationJob; "
          "MigrationController makes no jobs and runs none");
      return;
    }
    informers_->jobs = std::make_unique<kube::Informer<apis::PodMigrationJob>>(
        cluster_.reader, cluster_.io, jobsRef(), apis::decodePodMigrationJob);
    // The Filter point asks for every candidate pod of a pass: a lookup, not a scan of the jobs.
    informers_->jobs->addIndex(kActiveJobPodIndex, [](const apis::PodMigrationJob& j) {
      return j.active() && j.pod_ref ? std::vector<std::string>{j.pod_ref->uid}
                                     : std::vector<std::string>{};
    });
    informers_->reservations = std::make_unique<kube::Informer<apis::Reservation>>(
        cluster_.reader, cluster_.io, reservationsRef(), apis::decodeReservation);
    informers_->jobs->start();
    informers_->reservations->start();
  });
  thread_ = std::thread([this] {
    for (;;) {
      if (synced())
        reconcileAll();
      std::unique_lock lock(mu_);
      if (cv_.wait_for(lock, args_->arbitration.interval, [this] { return stopping_; }))
        return;
    }
  });
}

void MigrationJobController::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable())
    thread_.join();
  informers_->discovery.stop();
  std::lock_guard lock(informers_->mu);
  if (informers_->jobs)
    informers_->jobs->stop();
  if (informers_->reservations)
    informers_->reservations->stop();
}

bool MigrationJobController::synced() const {
  std::lock_guard lock(informers_->mu);
  // An API server without the PodMigrationJob API has nothing to list.
  if (informers_->answered && !informers_->jobs)
    return true;
  return informers_->jobs && informers_->jobs->hasSynced() && informers_->reservations &&
         informers_->reservations->hasSynced();
}

bool MigrationJobController::hasActiveJob(std::string_view pod_uid) const {
  std::lock_guard lock(informers_->mu);
  if (!informers_->jobs)
    return false;
  return !informers_->jobs->store().byIndex(kActiveJobPodIndex, std::string(pod_uid)).empty();
}

bool MigrationJobController::createJob(const Pod& pod, std::string_view trigger,
                                       std::string_view reason) {
  if (hasActiveJob(pod.uid))
    return true;
  if (cluster_.dry_run || args_->dry_run) {
    KOORD_LOG_INFO("descheduler: would create a PodMigrationJob for {} (dry run; {}: {})",
                   pod.key(), trigger, reason);
    return true;
  }
  {
    std::lock_guard lock(informers_->mu);
    if (!informers_->jobs)
      return false;
  }
  apis::NewPodMigrationJob job;
  job.name = newUuid();
  job.pod_namespace = pod.namespace_;
  job.pod_name = pod.name;
  job.pod_uid = pod.uid;
  job.mode = args_->default_job_mode;
  job.ttl = args_->default_job_ttl;
  job.delete_options = args_->default_delete_options;
  job.trigger = std::string(trigger);
  job.reason = std::string(reason);
  auto created = cluster_.writer.createSync(jobsRef(), apis::newPodMigrationJobBody(job));
  if (!created) {
    KOORD_LOG_WARNING("descheduler: creating a PodMigrationJob for {}: {}", pod.key(),
                      created.error().message);
    return false;
  }
  KOORD_LOG_INFO("descheduler: PodMigrationJob {} created for {} ({}: {})", job.name, pod.key(),
                 trigger, reason);
  return true;
}

std::optional<std::int32_t> MigrationJobController::expectedReplicas(const WorkloadRef& w,
                                                                     const std::string& ns) {
  // The workload's own replicas where it has them; a Job's parallelism.
  std::string group, version, resource;
  if (w.kind == "ReplicaSet" || w.kind == "StatefulSet" || w.kind == "Deployment") {
    group = "apps";
    version = "v1";
    resource = w.kind == "ReplicaSet"    ? "replicasets"
               : w.kind == "StatefulSet" ? "statefulsets"
                                         : "deployments";
  } else if (w.kind == "Job") {
    group = "batch";
    version = "v1";
    resource = "jobs";
  } else {
    return std::nullopt;
  }
  auto object = cluster_.reader.getSync({group, version, resource, ns, w.name, ""});
  if (!object)
    return std::nullopt;
  const auto* spec = object->as_object().if_contains("spec");
  const char* field = w.kind == "Job" ? "parallelism" : "replicas";
  if (spec == nullptr || !spec->is_object())
    return 1;
  const auto* replicas = spec->as_object().if_contains(field);
  // Kubernetes defaults an unset replicas (and a Job's parallelism) to 1.
  if (replicas == nullptr || !replicas->is_int64())
    return 1;
  return static_cast<std::int32_t>(replicas->as_int64());
}

MigrationCandidate MigrationJobController::candidateOf(const apis::PodMigrationJob& job,
                                                       std::shared_ptr<const Pod>* pod_out) {
  MigrationCandidate c;
  c.job_uid = job.uid;
  if (job.pod_ref) {
    c.pod_namespace = job.pod_ref->namespace_;
    c.pod_name = job.pod_ref->name;
    c.pod_uid = job.pod_ref->uid;
  }
  if (auto p = cluster_.pod ? cluster_.pod(c.pod_namespace, c.pod_name) : nullptr) {
    c.node_name = p->node_name;
    if (const OwnerRef* owner = p->controller())
      c.workload = WorkloadRef{owner->api_version, owner->kind, owner->name, owner->uid};
    c.evict_annotation = p->annotations.contains("descheduler.alpha.kubernetes.io/evict");
    if (pod_out != nullptr)
      *pod_out = std::move(p);
  }
  return c;
}

void MigrationJobController::reconcileAll() {
  std::vector<std::shared_ptr<const apis::PodMigrationJob>> jobs;
  {
    std::lock_guard lock(informers_->mu);
    if (!informers_->jobs)
      return;
    jobs = informers_->jobs->store().list();
  }
  std::map<std::string, double> phases{
      {"Pending", 0}, {"Running", 0}, {"Succeeded", 0}, {"Failed", 0}, {"Aborted", 0}};
  const auto now = Clock::now();
  std::vector<PendingJob> pending;
  std::vector<const apis::PodMigrationJob*> running;
  for (const auto& j : jobs) {
    phases[std::string(apis::toString(j->status.phase))] += 1;
    if (!j->active()) {
      limits_.release(j->uid);
      continue;
    }
    if (j->paused || j->terminating)
      continue;
    const auto ttl = j->ttl.value_or(args_->default_job_ttl);
    if (ttl.count() > 0 && now - j->creation_timestamp > ttl) {
      finish(*j, j->status, PodMigrationJobPhase::kFailed, apis::kPodMigrationJobReasonTimeout,
             fmt::format("the job ran past its ttl of {} s",
                         std::chrono::duration_cast<std::chrono::seconds>(ttl).count()));
      continue;
    }
    if (j->status.phase == PodMigrationJobPhase::kRunning) {
      limits_.track(candidateOf(*j));
      running.push_back(j.get());
      continue;
    }
    PendingJob p;
    p.uid = j->uid;
    p.name = j->name;
    p.creation_timestamp = j->creation_timestamp;
    std::shared_ptr<const Pod> pod;
    p.candidate = candidateOf(*j, &pod);
    p.pod_found = !p.candidate.node_name.empty();
    if (pod)
      p.sort = sortKeyOf(*pod);
    if (p.candidate.workload)
      p.candidate.expected_replicas =
          expectedReplicas(*p.candidate.workload, p.candidate.pod_namespace);
    pending.push_back(std::move(p));
  }
  for (const auto& [phase, n] : phases)
    jobs_by_phase_.with({phase}).set(n);
  reconcileRunning(running, now);
  if (pending.empty())
    return;
  std::map<std::string_view, const apis::PodMigrationJob*> by_uid;
  for (const auto& j : jobs)
    by_uid[j->uid] = j.get();
  for (const Decision& d : arbitrator_.arbitrate(pending)) {
    auto it = by_uid.find(d.job_uid);
    if (it == by_uid.end())
      continue;
    const apis::PodMigrationJob* job = it->second;
    if (d.verdict == Verdict::kFail) {
      finish(*job, job->status, PodMigrationJobPhase::kFailed,
             apis::kPodMigrationJobReasonForbiddenMigratePod, d.reason);
    } else if (d.verdict == Verdict::kStart) {
      apis::PodMigrationJobStatus status = job->status;
      status.phase = PodMigrationJobPhase::kRunning;
      if (!writeStatus(*job, status))
        limits_.release(job->uid);
    }
  }
}

void MigrationJobController::reconcileRunning(const std::vector<const apis::PodMigrationJob*>& jobs,
                                              Clock::time_point now) {
  // Each job's steps block on the API server; maxConcurrentReconciles jobs wait at once, as
  // Koordinator's workers do. Everything they share (caps, rate limiter, stores) is locked.
  const std::size_t workers = std::min<std::size_t>(
      jobs.size(), static_cast<std::size_t>(args_->max_concurrent_reconciles));
  if (workers <= 1) {
    for (const auto* j : jobs)
      reconcile(*j, now);
    return;
  }
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    for (std::size_t i = next++; i < jobs.size(); i = next++)
      reconcile(*jobs[i], now);
  };
  std::vector<std::jthread> pool;
  pool.reserve(workers - 1);
  for (std::size_t w = 1; w < workers; ++w)
    pool.emplace_back(work);
  work();
}

void MigrationJobController::reconcile(const apis::PodMigrationJob& job,
                                       std::chrono::system_clock::time_point) {
  if (!job.pod_ref) {
    finish(job, job.status, PodMigrationJobPhase::kFailed, apis::kPodMigrationJobReasonMissingPod,
           "spec.podRef is not set");
    return;
  }
  if (job.effectiveMode(args_->default_job_mode) == PodMigrationJobMode::kEvictDirectly)
    runEvictDirectly(job, job.status);
  else
    runReservationFirst(job, job.status);
}

bool MigrationJobController::evictPod(const apis::PodMigrationJob& job,
                                      const boost::json::value& pod_json) {
  if (!evict_rate_.tryAccept())
    return false;  // the next round tries again
  Pod pod;
  pod.namespace_ = job.pod_ref->namespace_;
  pod.name = job.pod_ref->name;
  // The job's UID, not the one just read: a pod recreated under the name between the read and
  // the eviction gets 409 rather than evicted.
  pod.uid = job.pod_ref->uid.empty() ? uidOf(pod_json) : job.pod_ref->uid;
  pod.node_name = nodeNameOf(pod_json);
  EvictOptions options;
  auto trigger = job.annotations.find(apis::kAnnotationEvictTrigger);
  options.plugin_name =
      trigger != job.annotations.end() ? trigger->second : std::string("MigrationController");
  options.reason = evictReason(job);
  options.method = evictionPolicyFor(job, pod_json);
  options.delete_options =
      job.delete_options
          ? &*job.delete_options
          : (args_->default_delete_options ? &*args_->default_delete_options : nullptr);
  return cluster_.evictor.evict(pod, options);
}

EvictionPolicy MigrationJobController::evictionPolicyFor(const apis::PodMigrationJob& job,
                                                         const boost::json::value& pod) const {
  // Koordinator's koordinator.sh/evict-policy label, the pod's before the job's; a value that
  // names no policy falls back to the configured one, as Koordinator's does.
  auto fromLabel = [](std::string_view value) -> std::optional<EvictionPolicy> {
    return value.empty() ? std::nullopt : parseEvictionMethod(value);
  };
  if (auto p = fromLabel(labelOf(pod, apis::kLabelEvictPolicy)))
    return *p;
  auto it = job.labels.find(apis::kLabelEvictPolicy);
  if (it != job.labels.end()) {
    if (auto p = fromLabel(it->second))
      return *p;
  }
  return args_->eviction_policy;
}

std::optional<bool> MigrationJobController::advanceEviction(const apis::PodMigrationJob& job,
                                                            apis::PodMigrationJobStatus& status) {
  if (conditionTrue(status, apis::kPodMigrationJobConditionEviction))
    return true;
  const bool evicting = conditionReason(status, apis::kPodMigrationJobConditionEviction) ==
                        apis::kPodMigrationJobReasonEvicting;
  const std::string key = fmt::format("{}/{}", job.pod_ref->namespace_, job.pod_ref->name);
  auto pod = cluster_.reader.getSync(podRef(*job.pod_ref));
  if (!pod && !kube::isNotFound(pod.error()))
    return false;  // the next round asks again
  // Gone, or another pod under its name: evicted if this job evicted it, missing otherwise.
  if (!pod || podReplaced(job, *pod)) {
    if (!evicting) {
      finish(job, status, PodMigrationJobPhase::kFailed, apis::kPodMigrationJobReasonMissingPod,
             fmt::format("Abort job caused by missing Pod \"{}\"", key));
      return std::nullopt;
    }
    setCondition(status, apis::kPodMigrationJobConditionEviction, "True",
                 apis::kPodMigrationJobReasonEvictComplete, "");
    status.status = std::string(apis::kPodMigrationJobConditionEviction);
    status.reason = std::string(apis::kPodMigrationJobReasonEvictComplete);
    status.message = fmt::format("Pod \"{}\" has been evicted", key);
    return true;
  }
  // Evicted and still there (terminating, or a soft eviction its controller has not acted on):
  // wait; the job's ttl bounds the wait.
  if (evicting || !evictPod(job, *pod))
    return false;
  std::string message = fmt::format("Pod \"{}\" evicted from node \"{}\" by the reason \"{}\"", key,
                                    nodeNameOf(*pod), evictReason(job));
  setCondition(status, apis::kPodMigrationJobConditionEviction, "False",
               apis::kPodMigrationJobReasonEvicting, message);
  status.status = std::string(apis::kPodMigrationJobConditionEviction);
  status.reason = std::string(apis::kPodMigrationJobReasonEvicting);
  status.message = std::move(message);
  if (writeStatus(job, status))
    recordJobEvent(job, kube::EventType::kNormal, std::string(apis::kPodMigrationJobReasonEvicting),
                   status.message);
  return false;
}

void MigrationJobController::runEvictDirectly(const apis::PodMigrationJob& job,
                                              apis::PodMigrationJobStatus status) {
  auto done = advanceEviction(job, status);
  if (!done || !*done)
    return;
  std::string message = status.message;
  finish(job, status, PodMigrationJobPhase::kSucceeded, "", std::move(message));
}

void MigrationJobController::runReservationFirst(const apis::PodMigrationJob& job,
                                                 apis::PodMigrationJobStatus status) {
  std::shared_ptr<const apis::Reservation> reservation;
  if (job.reservation_ref) {
    std::lock_guard lock(informers_->mu);
    reservation = informers_->reservations->store().get(job.reservation_ref->name);
  }
  const bool evicted = conditionTrue(status, apis::kPodMigrationJobConditionEviction);
  if (!job.reservation_ref) {
    auto pod = cluster_.reader.getSync(podRef(*job.pod_ref));
    if (!pod) {
      if (kube::isNotFound(pod.error()))
        finish(job, status, PodMigrationJobPhase::kFailed, apis::kPodMigrationJobReasonMissingPod,
               fmt::format("pod {}/{} is gone", job.pod_ref->namespace_, job.pod_ref->name));
      return;
    }
    apis::MigrationReservationInput in{&job, &*pod, Clock::now(), false};
    auto body = apis::migrationReservationBody(in);
    if (!body) {
      finish(job, status, PodMigrationJobPhase::kFailed,
             apis::kPodMigrationJobReasonFailedCreateReservation, body.error().message);
      return;
    }
    auto created = cluster_.writer.createSync(reservationsRef(), std::move(*body));
    std::string name, uid;
    if (created) {
      name = std::string(created->at("metadata").at("name").as_string());
      uid = std::string(created->at("metadata").at("uid").as_string());
    } else if (kube::isAlreadyExists(created.error())) {
      name = job.uid;  // a create answered already but not seen: the name is the job's UID
      auto existing = cluster_.reader.getSync(reservationsRef(name));
      if (!existing)
        return;
      uid = std::string(existing->at("metadata").at("uid").as_string());
    } else {
      KOORD_LOG_WARNING("descheduler: PodMigrationJob {}: creating its Reservation: {}", job.name,
                        created.error().message);
      return;
    }
    const auto ref = apis::reservationRefFor(name, uid);
    json::object patch{
        {"spec", json::object{
                     {"reservationOptions", json::object{{"reservationRef", apis::toJson(ref)}}}}}};
    auto patched = cluster_.writer.patchSync(jobsRef(job.name), kube::PatchType::kMergePatch,
                                             json::value(std::move(patch)));
    if (!patched) {
      KOORD_LOG_WARNING("descheduler: PodMigrationJob {}: recording Reservation {}: {}", job.name,
                        name, patched.error().message);
      return;
    }
    setCondition(status, apis::kPodMigrationJobConditionReservationCreated, "True", "", "");
    status.status = "ReservationCreated";
    writeStatus(job, status);
    return;
  }
  if (!reservation) {
    finish(job, status, PodMigrationJobPhase::kFailed,
           apis::kPodMigrationJobReasonMissingReservation,
           fmt::format("Reservation {} is gone", job.reservation_ref->name));
    return;
  }
  if (reservation->phase == apis::ReservationPhase::kFailed) {
    finish(job, status, PodMigrationJobPhase::kFailed,
           apis::kPodMigrationJobReasonReservationExpired,
           fmt::format("Reservation {} failed or expired", reservation->name));
    return;
  }
  if (reservation->phase == apis::ReservationPhase::kPending) {
    if (unschedulable(*reservation))
      finish(job, status, PodMigrationJobPhase::kFailed, apis::kPodMigrationJobReasonUnschedulable,
             fmt::format("Reservation {} cannot be scheduled", reservation->name));
    return;
  }
  // Available (or Succeeded once its owner took it).
  if (!conditionTrue(status, apis::kPodMigrationJobConditionReservationScheduled)) {
    setCondition(status, apis::kPodMigrationJobConditionReservationScheduled, "True", "", "");
    status.node_name = reservation->node_name;
    writeStatus(job, status);
    return;
  }
  if (!evicted) {
    auto done = advanceEviction(job, status);
    if (!done || !*done)
      return;
    status.reason = std::string(apis::kPodMigrationJobReasonWaitForPodBindReservation);
    writeStatus(job, status);
    return;
  }
  if (!reservation->current_owners.empty() ||
      reservation->phase == apis::ReservationPhase::kSucceeded) {
    if (!reservation->current_owners.empty())
      status.pod_ref = reservation->current_owners.front();
    setCondition(status, apis::kPodMigrationJobConditionPodBoundReservation, "True", "", "");
    finish(job, status, PodMigrationJobPhase::kSucceeded, "",
           fmt::format("the replacement pod holds Reservation {}", reservation->name));
  }
}

void MigrationJobController::finish(const apis::PodMigrationJob& job,
                                    apis::PodMigrationJobStatus status,
                                    apis::PodMigrationJobPhase phase, std::string_view reason,
                                    std::string message) {
  status.phase = phase;
  status.status = "Complete";
  status.reason = std::string(reason);
  status.message = std::move(message);
  if (writeStatus(job, status)) {
    limits_.release(job.uid);
    KOORD_LOG_INFO("descheduler: PodMigrationJob {} {}: {}", job.name, apis::toString(phase),
                   status.message);
    recordJobEvent(job,
                   phase == PodMigrationJobPhase::kSucceeded ? kube::EventType::kNormal
                                                             : kube::EventType::kWarning,
                   std::string(apis::toString(phase)), status.message);
    // A failed ReservationFirst job leaves no Reservation behind to hold room.
    if (phase != PodMigrationJobPhase::kSucceeded && job.reservation_ref) {
      kube::DeleteOptions d;
      auto removed = cluster_.writer.removeSync(reservationsRef(job.reservation_ref->name), d);
      if (!removed && !kube::isNotFound(removed.error()))
        KOORD_LOG_WARNING("descheduler: PodMigrationJob {}: deleting Reservation {}: {}", job.name,
                          job.reservation_ref->name, removed.error().message);
    }
  }
}

void MigrationJobController::recordJobEvent(const apis::PodMigrationJob& job, kube::EventType type,
                                            std::string reason, std::string message) {
  cluster_.events.record({std::string(apis::kPodMigrationJobKind),
                          fmt::format("{}/{}", apis::kReservationGroup, apis::kReservationVersion),
                          "", job.name, job.uid, "", ""},
                         type, std::move(reason), std::move(message));
}

bool MigrationJobController::writeStatus(const apis::PodMigrationJob& job,
                                         const apis::PodMigrationJobStatus& status) {
  auto ref = jobsRef(job.name);
  ref.subresource = "status";
  auto r =
      cluster_.writer.patchSync(ref, kube::PatchType::kMergePatch,
                                apis::podMigrationJobStatusPatch(status, job.resource_version));
  if (!r) {
    if (!kube::isConflict(r.error()))
      KOORD_LOG_WARNING("descheduler: PodMigrationJob {}: writing status: {}", job.name,
                        r.error().message);
    return false;
  }
  return true;
}

}  // namespace koord::roles::descheduler::migration
