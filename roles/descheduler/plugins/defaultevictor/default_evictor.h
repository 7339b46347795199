// DefaultEvictor: the community descheduler's evictor rules as a Filter plugin (which pods may be
// evicted at all, and with nodeFit whether another node would take them) and an Evict plugin.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "framework/plugin.h"
#include "koord/core/expected.h"
#include "koord/kube/labels.h"
#include "plugins/defaultevictor/args.h"

namespace koord::roles::descheduler::defaultevictor {

inline constexpr std::string_view kDefaultEvictorName = "DefaultEvictor";

/// Kubernetes' SystemCriticalPriority (system-cluster-critical, system-node-critical).
inline constexpr std::int32_t kSystemCriticalPriority = 2'000'000'000;

/// A pod with this annotation passes filter() whatever else holds.
inline constexpr std::string_view kEvictPodAnnotation = "descheduler.alpha.kubernetes.io/evict";

/// The priority at or above which pods are kept, from priorityThreshold: its value, else the
/// value of the PriorityClass it names (`lookup`). None when the args set neither, or when
/// system-critical pods may be evicted (upstream then applies no priority rule at all). Above
/// kSystemCriticalPriority is an error.
Expected<std::optional<std::int32_t>> thresholdPriority(
    const DefaultEvictorArgs& args,
    const std::function<Expected<std::int32_t>(std::string_view)>& lookup);

class DefaultEvictor final : public FilterPlugin, public EvictPlugin {
 public:
  /// `threshold` as thresholdPriority answers it.
  DefaultEvictor(std::shared_ptr<const DefaultEvictorArgs> args, FrameworkHandle& handle,
                 std::optional<std::int32_t> threshold);

  std::string_view name() const override { return kDefaultEvictorName; }
  bool filter(const Pod& pod) const override;
  bool preEvictionFilter(const Pod& pod) const override;
  /// Through the API side the handle gives (Eviction or Delete, nothing in dry-run).
  bool evict(const Pod& pod, const EvictOptions& options) override;

  /// Every rule `pod` breaks, as filter() logs them; empty when it may be evicted.
  std::vector<std::string> refusals(const Pod& pod) const;

 private:
  std::shared_ptr<const DefaultEvictorArgs> args_;
  FrameworkHandle& handle_;
  std::optional<std::int32_t> threshold_;
  std::optional<kube::Selector> pod_selector_;
  kube::Selector node_selector_;
};

/// Builds the plugin for a profile: resolves a priorityThreshold.name through the API server
/// (an error without one, or when the PriorityClass cannot be read).
Expected<std::shared_ptr<DefaultEvictor>> makeDefaultEvictor(
    std::shared_ptr<const DefaultEvictorArgs> args, FrameworkHandle& handle);

}  // namespace koord::roles::descheduler::defaultevictor
