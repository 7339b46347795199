// Koordinator's LoadAwareScheduling plugin: keeps pods off nodes whose real load (NodeMetric
// usage plus estimates of recent pods and the incoming one) passes a threshold; prefers idle ones.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "framework/assigned_pod_listener.h"
#include "framework/framework_handle.h"
#include "framework/plugin.h"
#include "plugins/loadaware/args.h"
#include "plugins/loadaware/estimator.h"
#include "plugins/loadaware/node_usage.h"
#include "plugins/loadaware/pod_assign_cache.h"
#include "plugins/loadaware/resource_vector.h"
#include "plugins/loadaware/usage_thresholds.h"

namespace koord::roles::scheduler::loadaware {

inline constexpr std::string_view kPluginName = "LoadAwareScheduling";

// Filter's reasons, as Koordinator words them ({}: the resource).
inline constexpr std::string_view kReasonNodeMetricExpired = "node(s) nodeMetric expired";
inline constexpr std::string_view kReasonUsageExceedThreshold = "node(s) {} usage exceed threshold";
inline constexpr std::string_view kReasonAggregatedUsageExceedThreshold =
    "node(s) {} aggregated usage exceed threshold";

/// CycleState key of the incoming pod's estimate, written by PreFilter.
inline constexpr std::string_view kIncomingPodEstimatedStateKey =
    "IncomingPodEstimatedLoadAwareScheduling";

/// Koordinator's isNodeMetricExpired: no report yet, or the last one `expiration_seconds` or
/// more ago (a non-positive expiration never expires a reported metric).
bool isNodeMetricExpired(const apis::NodeMetric* metric, std::int64_t expiration_seconds,
                         TimePoint now);

/// sum(s_r x w_r) + dominant x min(s_r), over the weights plus the dominant weight, where s_r
/// is (allocatable - used) x 100 / allocatable (0 when used exceeds it or nothing is allocatable).
/// The minimum runs over every resource of the vectors, weighted or not, as Koordinator's does.
std::int64_t loadAwareScore(std::int64_t dominant_weight, const ResourceVector& weights,
                            const ResourceVector& used, const ResourceVector& allocatable);

/// The plugin as the registry builds it: `args` null means the defaults; args of another type
/// or invalid ones are an error naming the problem.
kube::Expected<std::shared_ptr<Plugin>> createLoadAwareScheduling(
    std::shared_ptr<const PluginArgs> args, const FrameworkHandle& handle, NowFn now);

class IncomingEstimate;

class LoadAwareScheduling final : public PreFilterPlugin,
                                  public FilterPlugin,
                                  public ScorePlugin,
                                  public ReservePlugin,
                                  public AssignedPodListener {
 public:
  /// `args` must be valid (decodeLoadAwareSchedulingArgs validated them); `now` is the clock
  /// expiry and assignment times read.
  LoadAwareScheduling(std::shared_ptr<const LoadAwareSchedulingArgs> args,
                      const FrameworkHandle& handle, NowFn now);

  std::string_view name() const override { return kPluginName; }

  Status preFilter(CycleState& state, const PodInfo& pod) override;
  Status filter(const CycleState& state, const PodInfo& pod, const NodeInfo& node) const override;
  Status score(const CycleState& state, const PodInfo& pod, const NodeInfo& node,
               std::int64_t& score) const override;
  Status reserve(CycleState& state, const PodInfo& pod, const std::string& node) override;
  void unreserve(CycleState& state, const PodInfo& pod, const std::string& node) override;

  // AssignedPodListener: the informer's view of pods on nodes feeds the pod-assign cache, with
  // the PodScheduled/Initialized condition times the estimate windows are counted from.
  void onAssignedPodAdd(const PodInfo& pod) override;
  void onAssignedPodUpdate(const PodInfo& old_pod, const PodInfo& new_pod) override;
  void onAssignedPodDelete(const PodInfo& pod) override;

  /// For the scheduler's pod informer (onPodAdd/Update/Delete) and for tests.
  PodAssignCache& podAssignCache() { return *assign_cache_; }
  const ResourceVectorizer& vectorizer() const { return vectorizer_; }

 private:
  /// PreFilter's IncomingEstimate, or one built into `scratch` when PreFilter did not run.
  const IncomingEstimate& incoming(const CycleState& state, const PodInfo& pod,
                                   std::optional<IncomingEstimate>& scratch) const;
  /// The node's existing load as of `metric` (not null) and the pods assigned there now.
  std::shared_ptr<const apis::NodeMetric> nodeMetricOf(const NodeInfo& node_info) const;
  std::shared_ptr<const NodeUsageState> usageState(
      const std::string& node, const std::shared_ptr<const apis::NodeMetric>& metric) const;
  Status filterNodeUsage(const ResourceVector& thresholds, const ResourceVector& estimated,
                         const ResourceVector& allocatable, bool aggregated) const;

  std::shared_ptr<const LoadAwareSchedulingArgs> args_;
  const FrameworkHandle* handle_;
  NowFn now_;
  ResourceVectorizer vectorizer_;
  Estimator estimator_;
  UsageThresholdsProfile profile_;
  /// Empty when scoring is off (no weight and no dominant weight).
  ResourceVector score_weights_;
  std::unique_ptr<PodAssignCache> assign_cache_;
  mutable NodeUsageMemo memo_;
};

}  // namespace koord::roles::scheduler::loadaware
