// Koordinator's LoadAwareScheduling plugin: keeps pods off nodes whose real load (NodeMetric
// usage plus estimates of recent pods and the incoming one) passes a threshold; prefers idle ones.
#pragma once

#include <chrono>
#include <cstdint>
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
#include "plugins/loadaware/node_view.h"
#include "plugins/loadaware/pod_assign_cache.h"
#include "plugins/loadaware/resource_vector.h"
#include "plugins/loadaware/usage_thresholds.h"

namespace koord::roles::scheduler::loadaware {

inline constexpr std::string_view kPluginName = "LoadAwareScheduling";
/// The key LoadAwareScheduling declares its NodeMetric informer under (register.cpp).
inline constexpr std::string_view kNodeMetricSource = "slo.koordinator.sh/v1alpha1/nodemetrics";

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
/// The same from the report's metadata.updateTime (nullopt: never reported).
bool isNodeMetricExpired(const std::optional<TimePoint>& update_time,
                         std::int64_t expiration_seconds, TimePoint now);

/// sum(s_r x w_r) + dominant x min(s_r), over the weights plus the dominant weight, where s_r
/// is (allocatable - used) x 100 / allocatable (0 when used exceeds it or nothing is allocatable).
/// The minimum runs over every resource of the vectors, weighted or not, as Koordinator's does.
std::int64_t loadAwareScore(std::int64_t dominant_weight, const ResourceVector& weights,
                            const ResourceVector& used, const ResourceVector& allocatable);
/// The same with used = existing + incoming, over weights.size() entries.
std::int64_t loadAwareScore(std::int64_t dominant_weight, const ResourceVector& weights,
                            const std::int64_t* existing, const std::int64_t* incoming,
                            const std::int64_t* allocatable);

/// The plugin as the registry builds it: `args` null means the defaults; args of another type
/// or invalid ones are an error naming the problem.
kube::Expected<std::shared_ptr<Plugin>> createLoadAwareScheduling(
    std::shared_ptr<const PluginArgs> args, const FrameworkHandle& handle, NowFn now);

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
  struct Incoming;
  /// PreFilter's estimate and clock reading, or (PreFilter did not run) the clock read now and
  /// the estimate from this thread's memo (valid until this thread's next call).
  Incoming incoming(const CycleState& state, const PodInfo& pod) const;
  /// The attached NodeMetric, else the declared source's (then held in `holder`); may be null.
  const std::shared_ptr<const apis::NodeMetric>& nodeMetricOf(
      const NodeInfo& node_info, std::shared_ptr<const apis::NodeMetric>& holder) const;
  /// This thread's view of the node, made (makeView) on first sight of this Node object.
  NodeView& nodeView(const NodeInfo& node_info) const;
  NodeView& makeView(const NodeInfo& node_info) const;
  /// Brings the view's existing load up to `metric` (not null) and the node's assigned pods,
  /// rebuilding it (rebuildLoad) when either changed.
  void refreshLoad(NodeView& view, const std::shared_ptr<const apis::NodeMetric>& metric) const;
  void rebuildLoad(NodeView& view, const std::shared_ptr<const apis::NodeMetric>& metric) const;
  /// `limits`: the view's usageLimit of each threshold.
  Status filterNodeUsage(const ResourceVector& thresholds, const std::int64_t* limits,
                         const std::int64_t* existing, const std::int64_t* incoming,
                         const std::int64_t* allocatable, bool aggregated) const;

  std::shared_ptr<const LoadAwareSchedulingArgs> args_;
  const FrameworkHandle* handle_;
  /// The NodeMetrics for NodeInfos the cache did not attach one to; null without an informer.
  const ObjectSource<apis::NodeMetric>* metrics_;
  NowFn now_;
  ResourceVectorizer vectorizer_;
  Estimator estimator_;
  VectorEstimator vector_estimator_;
  UsageThresholdsProfile profile_;
  /// Empty when scoring is off (no weight and no dominant weight).
  ResourceVector score_weights_;
  /// The args' score aggregation; empty type: the plain node usage.
  std::string score_aggregation_type_;
  std::chrono::nanoseconds score_aggregated_duration_{0};
  std::unique_ptr<PodAssignCache> assign_cache_;
  /// Names this plugin's per-thread NodeView tables.
  std::uint64_t views_owner_;
};

}  // namespace koord::roles::scheduler::loadaware
