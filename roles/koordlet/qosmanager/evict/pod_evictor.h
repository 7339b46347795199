// Evicts pods for the QoS manager through the Eviction API, with the pod's UID as precondition
// (a pod recreated under the same name is never hit), an Event on each pod, and no double tries.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "koord/core/metrics.h"
#include "statesinformer/pod_meta.h"

namespace boost::asio {
class io_context;
}
namespace koord::kube {
class RestClient;
class EventRecorder;
}  // namespace koord::kube

namespace koord::roles::koordlet::qosmanager {

class PodEvictor {
 public:
  PodEvictor(kube::RestClient& client, kube::EventRecorder& events, metrics::Registry& registry,
             std::string node_name);
  ~PodEvictor();
  PodEvictor(const PodEvictor&) = delete;
  PodEvictor& operator=(const PodEvictor&) = delete;

  /// Evicts `pod` unless it was evicted in the last 5 minutes (Koordinator's podsEvicted cache);
  /// `done(true)` once the API server accepted the eviction (or it was already done). `reason`
  /// is the feature ("trigger by koordlet feature BEMemoryEvict"), `message` says why.
  void evict(const PodMeta& pod, std::string reason, std::string message,
             std::function<void(bool)> done);
  bool recentlyEvicted(const std::string& uid) const;

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace koord::roles::koordlet::qosmanager
