#include "evictions/api_pod_evictor.h"

#include <boost/json.hpp>

#include <fmt/format.h>

#include "koord/core/log.h"
#include "koord/kube/event_recorder.h"
#include "koord/kube/rest_client.h"

namespace koord::roles::descheduler {

namespace json = boost::json;

ApiPodEvictor::ApiPodEvictor(kube::RestClient& client, kube::EventRecorder& events,
                             std::function<std::optional<std::string>()> eviction_version,
                             bool dry_run, EvictionMethod method)
    : client_(client),
      events_(events),
      eviction_version_(std::move(eviction_version)),
      dry_run_(dry_run),
      method_(method) {}

bool ApiPodEvictor::evict(const Pod& pod, const EvictOptions& options) {
  if (dry_run_) {
    KOORD_LOG_INFO("descheduler: evicted pod {} in dry run mode (reason {}, strategy {}, node {})",
                   pod.key(), options.reason, options.plugin_name, pod.node_name);
    return true;
  }
  kube::ApiResult<json::value> result = json::value();
  if (method_ == EvictionMethod::kDelete) {
    kube::DeleteOptions d;
    d.uid = pod.uid;
    result = client_.removeSync({"", "v1", "pods", pod.namespace_, pod.name, ""}, d);
  } else {
    const auto version = eviction_version_();
    if (!version) {
      KOORD_LOG_WARNING(
          "descheduler: not evicting {}: the API server's Eviction version is not "
          "known yet",
          pod.key());
      return false;
    }
    // The UID precondition: a pod recreated under the same name since the pass's snapshot is a
    // different pod, and the API server answers 409 rather than evicting it.
    json::object body{
        {"apiVersion", *version},
        {"kind", "Eviction"},
        {"metadata", json::object{{"name", pod.name}, {"namespace", pod.namespace_}}},
        {"deleteOptions", json::object{{"preconditions", json::object{{"uid", pod.uid}}}}}};
    result = client_.createSync({"", "v1", "pods", pod.namespace_, pod.name, "eviction"},
                                json::value(std::move(body)));
  }
  if (!result) {
    const kube::ApiError& e = result.error();
    if (kube::isTooManyRequests(e))
      KOORD_LOG_INFO("descheduler: eviction of {} refused for now (a disruption budget): {}",
                     pod.key(), e.message);
    else
      KOORD_LOG_WARNING("descheduler: error evicting pod {} (reason {}): {} {}", pod.key(),
                        options.reason, e.code, e.message);
    return false;
  }
  KOORD_LOG_INFO("descheduler: evicted pod {} (reason {}, strategy {}, node {})", pod.key(),
                 options.reason, options.plugin_name, pod.node_name);
  events_.record({"Pod", "v1", pod.namespace_, pod.name, pod.uid, "", ""}, kube::EventType::kNormal,
                 "Descheduled", fmt::format("pod evicted by {}", options.reason));
  return true;
}

}  // namespace koord::roles::descheduler
