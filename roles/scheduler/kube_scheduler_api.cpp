#include "kube_scheduler_api.h"

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/json.hpp>

#include <chrono>
#include <utility>

#include <fmt/format.h>

#include "koord/core/log.h"
#include "koord/kube/event_recorder.h"
#include "koord/kube/rest_client.h"
#include "koord/kube/time.h"
#include "queue/scheduling_queue.h"
#include "scheduler_informers.h"

namespace koord::roles::scheduler {

namespace {

namespace json = boost::json;

kube::ResourceRef podRef(const PodInfo& pod, std::string subresource = "") {
  return {"", "v1", "pods", pod.namespace_, pod.name, std::move(subresource)};
}

kube::ObjectReference podReference(const PodInfo& pod) {
  kube::ObjectReference ref;
  ref.kind = "Pod";
  ref.api_version = "v1";
  ref.namespace_ = pod.namespace_;
  ref.name = pod.name;
  ref.uid = pod.uid;
  ref.resource_version = pod.resource_version;
  return ref;
}

kube::Error toError(const std::string& what, const kube::ApiError& e) {
  return kube::makeKubeError(fmt::format("{}: {}", what, e.message));
}

kube::ResourceRef reservationRef(const apis::Reservation& r, std::string subresource = "") {
  return {std::string(apis::kReservationGroup),
          std::string(apis::kReservationVersion),
          std::string(apis::kReservationResource),
          "",
          r.name,
          std::move(subresource)};
}

// A merge patch carrying the UID fails with 409 when the object was replaced by another of the
// same name: a write meant for one Reservation (or pod) never lands on its successor.
json::value withUid(json::value patch, const std::string& uid) {
  json::object& o = patch.as_object();
  json::value& meta = o["metadata"];
  if (!meta.is_object())
    meta = json::object{};
  meta.as_object()["uid"] = uid;
  return patch;
}

}  // namespace

json::value podScheduledFalsePatch(std::string_view reason, const std::string& message,
                                   const std::string& nominated_node,
                                   std::chrono::system_clock::time_point now) {
  json::object condition{{"type", "PodScheduled"},   {"status", "False"},
                         {"reason", reason},         {"message", message},
                         {"lastProbeTime", nullptr}, {"lastTransitionTime", kube::formatTime(now)}};
  json::object status{{"conditions", json::array{std::move(condition)}}};
  if (!nominated_node.empty())
    status["nominatedNodeName"] = nominated_node;
  return json::object{{"status", std::move(status)}};
}

json::value bindingBody(const PodInfo& pod, const std::string& node) {
  json::object meta{{"name", pod.name}, {"namespace", pod.namespace_}, {"uid", pod.uid}};
  // The apiserver copies a Binding's annotations onto the pod in the same write as
  // spec.nodeName: the scheduler's own annotations (reservation-allocated, ...) land with it.
  json::object annotations;
  for (std::string_view key : apis::kSchedulerOwnedPodAnnotations) {
    if (auto it = pod.annotations.find(key); it != pod.annotations.end())
      annotations[key] = it->second;
  }
  if (!annotations.empty())
    meta["annotations"] = std::move(annotations);
  return json::object{
      {"apiVersion", "v1"},
      {"kind", "Binding"},
      {"metadata", std::move(meta)},
      {"target", json::object{{"apiVersion", "v1"}, {"kind", "Node"}, {"name", node}}}};
}

KubeSchedulerApi::KubeSchedulerApi(kube::RestClient& client, boost::asio::io_context& io,
                                   const SchedulerInformers& informers, std::string host)
    : client_(client), io_(io), informers_(informers), host_(std::move(host)) {}

KubeSchedulerApi::~KubeSchedulerApi() = default;

void KubeSchedulerApi::forgetPod(const std::string& uid) {
  std::lock_guard lock(mu_);
  last_condition_.erase(uid);
}

const AnyObjectSource* KubeSchedulerApi::objectSource(std::string_view key) const {
  return informers_.objectSource(key);
}

std::vector<DisruptionBudget> KubeSchedulerApi::disruptionBudgets(
    std::string_view namespace_) const {
  std::vector<DisruptionBudget> out;
  for (const auto& b : informers_.disruptionBudgets(namespace_))
    out.push_back(*b);
  return out;
}

std::vector<std::shared_ptr<const PodInfo>> KubeSchedulerApi::nominatedPodsForNode(
    std::string_view node) const {
  return queue_ ? queue_->nominatedPodsForNode(node)
                : std::vector<std::shared_ptr<const PodInfo>>{};
}

bool KubeSchedulerApi::anyNominatedPods() const {
  return queue_ != nullptr && queue_->hasNominatedPods();
}

void KubeSchedulerApi::bindPod(std::shared_ptr<const PodInfo> pod, const std::string& node,
                               ApiCallback done) const {
  client_.create(podRef(*pod, "binding"), bindingBody(*pod, node),
                 [pod, node, done = std::move(done)](kube::ApiResult<json::value> r) {
                   if (r)
                     done({});
                   else
                     done(toError(fmt::format("binding {} to {}", pod->key(), node), r.error()));
                 });
}

kube::Expected<void> KubeSchedulerApi::deletePod(const PodInfo& pod) const {
  kube::DeleteOptions options;
  options.uid = pod.uid;
  auto r = client_.removeSync(podRef(pod), options);
  if (!r && !kube::isNotFound(r.error()))
    return toError("deleting " + pod.key(), r.error());
  return {};
}

kube::Expected<void> KubeSchedulerApi::evictPod(const PodInfo& pod) const {
  const auto version = informers_.evictionVersion();
  if (!version)
    return kube::makeKubeError("evicting " + pod.key() +
                               ": the API server has not said which Eviction version it takes");
  auto r = client_.createSync(
      podRef(pod, "eviction"),
      kube::evictionBody(*version, pod.namespace_, pod.name,
                         json::object{{"preconditions", json::object{{"uid", pod.uid}}}}));
  if (!r && !kube::isNotFound(r.error()))
    return toError("evicting " + pod.key(), r.error());
  return {};
}

kube::Expected<boost::json::value> KubeSchedulerApi::getPod(const PodInfo& pod) const {
  auto r = client_.getSync(podRef(pod));
  if (!r)
    return toError("getting " + pod.key(), r.error());
  return std::move(*r);
}

kube::Expected<void> KubeSchedulerApi::clearNominatedNodeName(const PodInfo& pod) const {
  auto r =
      client_.patchSync(podRef(pod, "status"), kube::PatchType::kMergePatch,
                        json::object{{"status", json::object{{"nominatedNodeName", nullptr}}}});
  if (!r && !kube::isNotFound(r.error()))
    return toError("clearing the nominated node of " + pod.key(), r.error());
  return {};
}

void KubeSchedulerApi::patchPod(std::shared_ptr<const PodInfo> pod, json::value patch,
                                ApiCallback done) const {
  client_.patch(
      podRef(*pod), kube::PatchType::kMergePatch, withUid(std::move(patch), pod->uid),
      [pod, done = std::move(done)](kube::ApiResult<json::value> r) {
        if (!r) {
          done(toError("patching " + pod->key(), r.error()));
          return;
        }
        // The patch lands on a pod being deleted too; its room must not stay taken.
        const json::value* meta = r->is_object() ? r->as_object().if_contains("metadata") : nullptr;
        if (meta != nullptr && meta->is_object() &&
            meta->as_object().if_contains("deletionTimestamp") != nullptr &&
            !meta->as_object().at("deletionTimestamp").is_null()) {
          done(kube::makeKubeError("patching " + pod->key() + ": the pod is being deleted"));
          return;
        }
        done({});
      });
}

void KubeSchedulerApi::mergePatch(const kube::ResourceRef& ref, json::value patch,
                                  ApiCallback done) const {
  client_.patch(ref, kube::PatchType::kMergePatch, std::move(patch),
                [what = fmt::format("patching {} {}/{}", ref.resource, ref.namespace_, ref.name),
                 done = std::move(done)](kube::ApiResult<json::value> r) {
                  if (r)
                    done({});
                  else
                    done(toError(what, r.error()));
                });
}

bool KubeSchedulerApi::runAfter(std::chrono::milliseconds delay, std::function<void()> fn) const {
  auto timer = std::make_shared<boost::asio::steady_timer>(io_, delay);
  // The timer lives in its own handler; a stopped reactor drops both without running fn.
  timer->async_wait([timer, fn = std::move(fn)](const boost::system::error_code& ec) {
    if (!ec)
      fn();
  });
  return true;
}

std::shared_ptr<const ReservationState> KubeSchedulerApi::currentReservation(
    const std::string& name) const {
  return informers_.reservation(name);
}

std::vector<std::shared_ptr<const ReservationState>> KubeSchedulerApi::reservations() const {
  return informers_.allReservations();
}

void KubeSchedulerApi::patchReservationStatus(const apis::Reservation& r, json::value patch,
                                              ApiCallback done) {
  client_.patch(reservationRef(r, "status"), kube::PatchType::kMergePatch,
                withUid(std::move(patch), r.uid),
                [name = r.name, done = std::move(done)](kube::ApiResult<json::value> res) {
                  if (res)
                    done({});
                  else
                    done(toError("updating the status of reservation " + name, res.error()));
                });
}

void KubeSchedulerApi::patchReservation(const apis::Reservation& r, json::value patch,
                                        ApiCallback done) {
  client_.patch(reservationRef(r), kube::PatchType::kMergePatch, withUid(std::move(patch), r.uid),
                [name = r.name, done = std::move(done)](kube::ApiResult<json::value> res) {
                  if (res)
                    done({});
                  else
                    done(toError("updating reservation " + name, res.error()));
                });
}

void KubeSchedulerApi::deleteReservation(const apis::Reservation& r, ApiCallback done) {
  kube::DeleteOptions options;
  options.uid = r.uid;
  client_.remove(reservationRef(r), options,
                 [name = r.name, done = std::move(done)](kube::ApiResult<json::value> res) {
                   if (res || kube::isNotFound(res.error()))
                     done({});
                   else
                     done(toError("deleting reservation " + name, res.error()));
                 });
}

void KubeSchedulerApi::reservationEvent(const apis::Reservation& r, const std::string& component,
                                        bool warning, std::string_view reason,
                                        const std::string& message) {
  kube::ObjectReference ref;
  ref.kind = std::string(apis::kReservationKind);
  ref.api_version = fmt::format("{}/{}", apis::kReservationGroup, apis::kReservationVersion);
  ref.name = r.name;
  ref.uid = r.uid;
  ref.resource_version = r.resource_version;
  recorderFor(component).record(ref, warning ? kube::EventType::kWarning : kube::EventType::kNormal,
                                std::string(reason), message);
}

std::shared_ptr<const PodInfo> KubeSchedulerApi::currentPod(const std::string& key) const {
  return informers_.pods.store().get(key);
}

kube::EventRecorder& KubeSchedulerApi::recorderFor(const std::string& profile) {
  std::lock_guard lock(mu_);
  auto& r = recorders_[profile];
  if (!r)
    r = std::make_unique<kube::EventRecorder>(client_, io_, kube::EventSource{profile, host_});
  return *r;
}

void KubeSchedulerApi::reportScheduled(const PodInfo& pod, const std::string& node,
                                       const std::string& profile) {
  forgetPod(pod.uid);
  recorderFor(profile).record(podReference(pod), kube::EventType::kNormal, "Scheduled",
                              fmt::format("Successfully assigned {} to {}", pod.key(), node));
}

void KubeSchedulerApi::reportFailure(const PodInfo& pod, const std::string& profile,
                                     std::string_view reason, const std::string& message,
                                     const std::string& nominated_node) {
  recorderFor(profile).record(podReference(pod), kube::EventType::kWarning, "FailedScheduling",
                              message);
  // As upstream's updatePod: no write when the condition and the nomination are unchanged.
  std::string written = fmt::format("{}\n{}\n{}", reason, message, nominated_node);
  {
    std::lock_guard lock(mu_);
    auto& last = last_condition_[pod.uid];
    if (last == written)
      return;
    last = written;
  }
  const std::string key = pod.key();
  const std::string uid = pod.uid;
  client_.patch(
      podRef(pod, "status"), kube::PatchType::kStrategicMergePatch,
      podScheduledFalsePatch(reason, message, nominated_node, std::chrono::system_clock::now()),
      [this, key, uid](kube::ApiResult<json::value> r) {
        if (r)
          return;
        if (!kube::isNotFound(r.error()))
          KOORD_LOG_ERROR("scheduler: updating the PodScheduled condition of {}: {}", key,
                          r.error().message);
        forgetPod(uid);  // written again next time
      });
}

}  // namespace koord::roles::scheduler
