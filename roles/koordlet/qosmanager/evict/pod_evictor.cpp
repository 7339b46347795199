#include "qosmanager/evict/pod_evictor.h"

#include <boost/json.hpp>

#include <map>
#include <mutex>

#include <fmt/format.h>

#include "audit/auditor.h"
#include "koord/core/log.h"
#include "koord/kube/discovery.h"
#include "koord/kube/event_recorder.h"
#include "koord/kube/rest_client.h"

namespace koord::roles::koordlet::qosmanager {

namespace json = boost::json;
using Clock = std::chrono::steady_clock;

struct PodEvictor::Impl {
  Impl(kube::RestClient& c, kube::EventRecorder& e, metrics::Registry& r, std::string node)
      : client(c),
        events(e),
        node_name(std::move(node)),
        // Koordinator's koordlet_pod_eviction counts accepted evictions by reason.
        evictions(r.counter("koordlet_pod_eviction", "Number of eviction launched by koordlet",
                            {"node", "reason"})),
        failures(r.counter("koordlet_pod_eviction_failed", "Evictions the API server refused",
                           {"node", "reason"})) {}
  kube::RestClient& client;
  kube::EventRecorder& events;
  std::string node_name;
  metrics::CounterFamily& evictions;
  metrics::CounterFamily& failures;
  mutable std::mutex mu;
  std::map<std::string, Clock::time_point> evicted;  // uid -> when
  std::optional<std::string> version;                // under mu
  bool no_version_logged = false;                    // under mu
  std::unique_ptr<kube::DiscoveryRetry> discovery;

  void forgetOld(Clock::time_point now) {
    for (auto it = evicted.begin(); it != evicted.end();) {
      if (now - it->second > std::chrono::minutes(5))
        it = evicted.erase(it);
      else
        ++it;
    }
  }
};

PodEvictor::PodEvictor(kube::RestClient& client, kube::EventRecorder& events,
                       metrics::Registry& registry, std::string node_name)
    : impl_(std::make_shared<Impl>(client, events, registry, std::move(node_name))) {}

PodEvictor::~PodEvictor() {
  stop();
}

void PodEvictor::discoverEvictionVersion(boost::asio::io_context& io) {
  if (impl_->discovery)
    return;
  impl_->discovery = std::make_unique<kube::DiscoveryRetry>(
      impl_->client, io, "pod eviction", [](kube::RestClient& c, kube::VersionCallback done) {
        kube::evictionVersion(c, std::move(done));
      });
  // The Impl, not `this`: the answer may come while the evictor is being torn down.
  impl_->discovery->start([impl = std::weak_ptr<Impl>(impl_)](std::optional<std::string> v) {
    auto self = impl.lock();
    if (!self)
      return;
    if (v)
      KOORD_LOG_INFO("pod eviction: the API server takes {} Evictions", *v);
    else
      KOORD_LOG_ERROR(
          "pod eviction: the API server lists no pods/eviction subresource; BE pods cannot be "
          "evicted");
    std::lock_guard lock(self->mu);
    self->version = std::move(v);
  });
}

void PodEvictor::setEvictionVersion(std::string api_version) {
  std::lock_guard lock(impl_->mu);
  impl_->version = std::move(api_version);
}

std::optional<std::string> PodEvictor::evictionVersion() const {
  std::lock_guard lock(impl_->mu);
  return impl_->version;
}

void PodEvictor::stop() {
  if (impl_->discovery)
    impl_->discovery->stop();
}

bool PodEvictor::recentlyEvicted(const std::string& uid) const {
  std::lock_guard lock(impl_->mu);
  auto it = impl_->evicted.find(uid);
  return it != impl_->evicted.end() && Clock::now() - it->second <= std::chrono::minutes(5);
}

void PodEvictor::evict(const PodMeta& pod, std::string reason, std::string message,
                       std::function<void(bool)> done) {
  std::string version;
  {
    std::lock_guard lock(impl_->mu);
    impl_->forgetOld(Clock::now());
    if (impl_->evicted.count(pod.uid) > 0) {
      done(true);
      return;
    }
    if (!impl_->version) {
      if (!impl_->no_version_logged)
        KOORD_LOG_WARNING(
            "evict pod {}: not evicting before the API server said which Eviction "
            "version it takes",
            pod.key());
      impl_->no_version_logged = true;
      done(false);
      return;
    }
    version = *impl_->version;
  }
  // Recorded when tried, as Koordinator does: the Event and the log line say how it ended.
  audit::V(0).pod(pod.namespace_, pod.name).reason(reason).message(message).record();
  json::value body =
      kube::evictionBody(version, pod.namespace_, pod.name,
                         json::object{{"preconditions", json::object{{"uid", pod.uid}}}});
  kube::ObjectReference ref{"Pod", "v1", pod.namespace_, pod.name, pod.uid, "", ""};
  auto text = fmt::format("evict Pod:{}/{}, reason: {}, message: {}", pod.namespace_, pod.name,
                          reason, message);
  impl_->client.create({"", "v1", "pods", pod.namespace_, pod.name, "eviction"}, std::move(body),
                       [impl = impl_, ref, uid = pod.uid, key = pod.key(), reason, text,
                        done = std::move(done)](kube::ApiResult<json::value> r) {
                         if (r) {
                           {
                             std::lock_guard lock(impl->mu);
                             impl->evicted[uid] = Clock::now();
                           }
                           impl->events.record(ref, kube::EventType::kWarning, "evictPodSuccess",
                                               text);
                           impl->evictions.with({impl->node_name, reason}).inc();
                           KOORD_LOG_INFO("evict pod {} success, reason: {}", key, reason);
                           done(true);
                           return;
                         }
                         impl->events.record(ref, kube::EventType::kWarning, "evictPodFail",
                                             fmt::format("{}, error {}", text, r.error().message));
                         impl->failures.with({impl->node_name, reason}).inc();
                         KOORD_LOG_ERROR("evict pod {} failed, reason: {}, error: {}", key, reason,
                                         r.error().message);
                         done(false);
                       });
}

}  // namespace koord::roles::koordlet::qosmanager
