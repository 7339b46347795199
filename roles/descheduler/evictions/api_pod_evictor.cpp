#include "evictions/api_pod_evictor.h"

#include <boost/json.hpp>

#include <fmt/format.h>

#include <chrono>

#include "koord/apis/pod_migration_job.h"
#include "koord/core/log.h"
#include "koord/kube/discovery.h"
#include "koord/kube/event_recorder.h"
#include "koord/kube/rest_client.h"
#include "koord/kube/time.h"

namespace koord::roles::descheduler {

namespace json = boost::json;

namespace {

// The job's delete options, bound to the pod the snapshot saw: a pod recreated under the same
// name since is a different pod, and the API server answers 409 rather than removing it.
apis::DeleteOptions boundToPod(const Pod& pod, const apis::DeleteOptions* given) {
  apis::DeleteOptions d = given != nullptr ? *given : apis::DeleteOptions{};
  if (d.precondition_uid.empty())
    d.precondition_uid = pod.uid;
  return d;
}

kube::DeleteOptions asRequestOptions(const apis::DeleteOptions& d) {
  kube::DeleteOptions out;
  out.uid = d.precondition_uid;
  if (!d.precondition_resource_version.empty())
    out.resource_version = d.precondition_resource_version;
  if (!d.propagation_policy.empty())
    out.propagation_policy = d.propagation_policy;
  else if (d.orphan_dependents)
    out.propagation_policy = *d.orphan_dependents ? "Orphan" : "Background";
  out.grace_period_seconds = d.grace_period_seconds;
  out.dry_run = !d.dry_run.empty();
  return out;
}

kube::ResourceRef podRef(const Pod& pod, std::string subresource = {}) {
  return {"", "v1", "pods", pod.namespace_, pod.name, std::move(subresource)};
}

}  // namespace

ApiPodEvictor::ApiPodEvictor(kube::RestClient& client, kube::EventRecorder& events,
                             std::function<std::optional<std::string>()> eviction_version,
                             bool dry_run, EvictionMethod method)
    : client_(client),
      events_(events),
      eviction_version_(std::move(eviction_version)),
      dry_run_(dry_run),
      method_(method) {}

bool ApiPodEvictor::evict(const Pod& pod, const EvictOptions& options) {
  const EvictionMethod method = options.method.value_or(method_);
  if (dry_run_) {
    KOORD_LOG_INFO(
        "descheduler: evicted pod {} in dry run mode (reason {}, strategy {}, node {}, by {})",
        pod.key(), options.reason, options.plugin_name, pod.node_name, toString(method));
    return true;
  }
  const apis::DeleteOptions delete_options = boundToPod(pod, options.delete_options);
  kube::ApiResult<json::value> result = json::value();
  switch (method) {
    case EvictionMethod::kDelete:
      result = client_.removeSync(podRef(pod), asRequestOptions(delete_options));
      break;
    case EvictionMethod::kSoftEviction: {
      json::object spec{{"timestamp", kube::formatTime(std::chrono::system_clock::now())},
                        {"deleteOptions", apis::toJson(delete_options)}};
      if (!options.plugin_name.empty())
        spec["initiator"] = options.plugin_name;
      if (!options.reason.empty())
        spec["reason"] = options.reason;
      // metadata.uid in the patch binds it to this pod: the API server refuses to change a UID.
      json::object patch{
          {"metadata", json::object{{"uid", pod.uid},
                                    {"annotations", json::object{{kAnnotationSoftEviction,
                                                                  json::serialize(spec)}}}}}};
      result = client_.patchSync(podRef(pod), kube::PatchType::kMergePatch,
                                 json::value(std::move(patch)));
      break;
    }
    case EvictionMethod::kEviction: {
      const auto version = eviction_version_();
      if (!version) {
        KOORD_LOG_WARNING(
            "descheduler: not evicting {}: the API server's Eviction version is not known yet",
            pod.key());
        return false;
      }
      result = client_.createSync(podRef(pod, "eviction"),
                                  kube::evictionBody(*version, pod.namespace_, pod.name,
                                                     apis::toJson(delete_options).as_object()));
      break;
    }
  }
  if (!result) {
    const kube::ApiError& e = result.error();
    if (kube::isTooManyRequests(e))
      KOORD_LOG_INFO("descheduler: eviction of {} refused for now (a disruption budget): {}",
                     pod.key(), e.message);
    else
      KOORD_LOG_WARNING("descheduler: error evicting pod {} (reason {}, by {}): {} {}", pod.key(),
                        options.reason, toString(method), e.code, e.message);
    return false;
  }
  KOORD_LOG_INFO("descheduler: evicted pod {} (reason {}, strategy {}, node {}, by {})", pod.key(),
                 options.reason, options.plugin_name, pod.node_name, toString(method));
  events_.record({"Pod", "v1", pod.namespace_, pod.name, pod.uid, "", ""}, kube::EventType::kNormal,
                 "Descheduled",
                 fmt::format("Pod evicted from node \"{}\" by the reason \"{}\"", pod.node_name,
                             options.reason));
  return true;
}

}  // namespace koord::roles::descheduler
