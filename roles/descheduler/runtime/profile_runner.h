// One profile of the DeschedulerConfiguration at run time: its plugins built from the registry,
// the Deschedule and Balance points run over a pass's nodes, and the FrameworkHandle its plugins
// evict through (the Filter plugins' verdict, the shared limiter, the Evict plugin, the metric).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "config/descheduler_config.h"
#include "framework/eviction_limiter.h"
#include "framework/plugin.h"
#include "framework/plugin_registry.h"
#include "koord/core/expected.h"
#include "koord/core/metrics.h"

namespace koord::roles::descheduler {

class ProfileRunner final : public FrameworkHandle {
 public:
  /// Builds every plugin the profile enables (each once, whatever points it is enabled at).
  /// The limiter and the eviction API are shared by all profiles and must outlive the runner.
  static Expected<std::unique_ptr<ProfileRunner>> build(
      const config::Profile& profile, const PluginRegistry& registry, EvictionLimiter& limiter,
      PodEvictionApi& api, metrics::Registry& metrics, ClusterServices* cluster = nullptr);

  const std::string& name() const { return name_; }
  /// The nodes of `all` this profile works on (its nodeSelector).
  std::vector<const Node*> selectNodes(const std::vector<const Node*>& all) const;

  /// Each Deschedule plugin in order over `nodes`; the first error stops the point.
  Expected<void> runDeschedule(const Snapshot& snapshot, const std::vector<const Node*>& nodes);
  /// Each Balance plugin in order over `nodes`.
  Expected<void> runBalance(const Snapshot& snapshot, const std::vector<const Node*>& nodes);

  // FrameworkHandle
  const Snapshot& snapshot() const override;
  bool filter(const Pod& pod) const override;
  bool preEvictionFilter(const Pod& pod) const override;
  bool evict(const Pod& pod, const EvictOptions& options) override;
  bool nodeLimitReached(std::string_view node) const override;
  bool totalLimitReached() const override;
  PodEvictionApi& podEvictor() override { return api_; }
  ClusterServices* cluster() override { return cluster_; }

 private:
  ProfileRunner(std::string name, EvictionLimiter& limiter, PodEvictionApi& api,
                metrics::Registry& metrics);

  std::string name_;
  std::optional<kube::Selector> node_selector_;
  EvictionLimiter& limiter_;
  PodEvictionApi& api_;
  metrics::CounterFamily& evicted_;
  std::vector<std::shared_ptr<Plugin>> plugins_;  // owns them
  std::vector<DeschedulePlugin*> deschedule_;
  std::vector<BalancePlugin*> balance_;
  std::vector<FilterPlugin*> filter_;
  EvictPlugin* evict_ = nullptr;
  const Snapshot* snapshot_ = nullptr;
  ClusterServices* cluster_ = nullptr;
};

}  // namespace koord::roles::descheduler
