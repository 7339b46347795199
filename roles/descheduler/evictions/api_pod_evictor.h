// The API server side of the descheduler's evictions: the Eviction subresource (the API server
// then honours PodDisruptionBudgets) or a Delete, each with the pod's UID as precondition, an
// Event on the pod, and no call at all in dry-run.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "framework/plugin.h"

namespace koord::kube {
class RestClient;
class EventRecorder;
}  // namespace koord::kube

namespace koord::roles::descheduler {

enum class EvictionMethod { kEviction, kDelete };

class ApiPodEvictor final : public PodEvictionApi {
 public:
  /// `eviction_version` answers the group version pods/eviction takes ("policy/v1"), nullopt
  /// while discovery has not answered; `client` is the leader's fenced writer.
  ApiPodEvictor(kube::RestClient& client, kube::EventRecorder& events,
                std::function<std::optional<std::string>()> eviction_version, bool dry_run,
                EvictionMethod method = EvictionMethod::kEviction);

  /// Blocks until the API server answers; never on an io thread.
  bool evict(const Pod& pod, const EvictOptions& options) override;

 private:
  kube::RestClient& client_;
  kube::EventRecorder& events_;
  std::function<std::optional<std::string>()> eviction_version_;
  bool dry_run_;
  EvictionMethod method_;
};

}  // namespace koord::roles::descheduler
