// Evicts pods for the QoS manager through the Eviction API, with the pod's UID as precondition
// (a pod recreated under the same name is never hit), an Event on each pod, and no double tries.
// The Eviction's apiVersion is the one the API server lists for pods/eviction: policy/v1beta1
// is gone from 1.25 on and policy/v1 unknown before 1.22.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

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

  /// Asks the API server (on `io`, retrying until it answers) which Eviction version it takes.
  /// Until it has answered, evict() refuses: a guessed version may be one the server rejects.
  void discoverEvictionVersion(boost::asio::io_context& io);
  /// For a caller that knows the version already.
  void setEvictionVersion(std::string api_version);
  /// "policy/v1" or "policy/v1beta1"; nullopt until discovery answered, or when the server
  /// serves no eviction subresource.
  std::optional<std::string> evictionVersion() const;
  /// Ends a discovery still retrying (graceful shutdown must not wait for its timer).
  void stop();

  /// Evicts `pod` unless it was evicted in the last 5 minutes (Koordinator's podsEvicted cache);
  /// `done(true)` once the API server accepted the eviction (or it was already done), `done(false)`
  /// at once while the eviction version is not known. `reason` is the feature ("trigger by
  /// koordlet feature BEMemoryEvict"), `message` says why.
  void evict(const PodMeta& pod, std::string reason, std::string message,
             std::function<void(bool)> done);
  bool recentlyEvicted(const std::string& uid) const;

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace koord::roles::koordlet::qosmanager
