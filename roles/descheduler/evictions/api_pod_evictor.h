// The API server side of the descheduler's evictions: the Eviction subresource (the API server
// then honours PodDisruptionBudgets), a Delete, or Koordinator's soft eviction (an annotation),
// each bound to the pod's UID, an Event on the pod, and no call at all in dry-run.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "framework/plugin.h"

namespace koord::kube {
class RestClient;
class EventRecorder;
}  // namespace koord::kube

namespace koord::roles::descheduler {

/// The annotation a soft eviction writes: a JSON SoftEvictionSpec {timestamp, deleteOptions,
/// initiator, reason} for a workload's own controller to act on.
inline constexpr std::string_view kAnnotationSoftEviction =
    "scheduling.koordinator.sh/soft-eviction";

class ApiPodEvictor final : public PodEvictionApi {
 public:
  /// `eviction_version` answers the group version pods/eviction takes ("policy/v1"), nullopt
  /// while discovery has not answered; `client` is the leader's fenced writer. `method` is used
  /// where the options name none.
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
