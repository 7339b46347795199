#include "kube_scheduler_api.h"

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
  return json::object{
      {"apiVersion", "v1"},
      {"kind", "Binding"},
      {"metadata",
       json::object{{"name", pod.name}, {"namespace", pod.namespace_}, {"uid", pod.uid}}},
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

kube::Expected<void> KubeSchedulerApi::clearNominatedNodeName(const PodInfo& pod) const {
  auto r =
      client_.patchSync(podRef(pod, "status"), kube::PatchType::kMergePatch,
                        json::object{{"status", json::object{{"nominatedNodeName", nullptr}}}});
  if (!r && !kube::isNotFound(r.error()))
    return toError("clearing the nominated node of " + pod.key(), r.error());
  return {};
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
