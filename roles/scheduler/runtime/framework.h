// One profile's plugins, built from the configuration and run per extension point as
// kube-scheduler's frameworkImpl runs them: Filter and Score in parallel over nodes, the other
// points in order on the scheduling thread, PreBind and Bind asynchronously.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "config/expand_plugins.h"
#include "config/scheduler_config.h"
#include "framework/framework_handle.h"
#include "framework/plugin.h"
#include "framework/plugin_registry.h"
#include "framework/snapshot.h"
#include "koord/kube/error.h"
#include "runtime/framework_metrics.h"

namespace koord::roles::scheduler {

class ReservationNominator;

class Parallelizer;
class Extenders;

class Framework final : public FrameworkHandle {
 public:
  /// Builds each plugin the profile names once (shared by every point it serves) from its
  /// decoded args, then checks the expanded lists (a plugin at a point it does not implement,
  /// no queue sort or bind plugin, ...). Errors name the profile and plugin.
  static kube::Expected<std::unique_ptr<Framework>> create(const config::Profile& profile,
                                                           const PluginRegistry& registry,
                                                           const ClusterView& cluster,
                                                           Parallelizer& parallelizer,
                                                           metrics::Registry* metrics = nullptr);
  ~Framework() override;

  const std::string& schedulerName() const { return scheduler_name_; }
  const config::EffectivePlugins& plugins() const { return effective_; }
  bool queueSortLess(const QueuedPodInfo& a, const QueuedPodInfo& b) const {
    return queue_sort_->less(a, b);
  }
  std::shared_ptr<const void> queueSortHandle(const PodInfo& pod) const {
    return queue_sort_->sortHandle(pod);
  }

  /// The snapshot the next extension-point calls see (the scheduler sets it per cycle).
  void setSnapshot(const Snapshot* snapshot) { snapshot_ = snapshot; }

  // FrameworkHandle
  const Snapshot& snapshot() const override;
  const ClusterView& cluster() const override { return cluster_; }
  Status runFilterPlugins(const CycleState& state, const PodInfo& pod,
                          const NodeInfo& node) const override;
  Status runFilterPluginsWithNominatedPods(const CycleState& state, const PodInfo& pod,
                                           const NodeInfo& node) const override;
  Status runPreFilterAddPod(CycleState& state, const PodInfo& pod_to_schedule,
                            const PodInfo& pod_to_add, const NodeInfo& node) const override;
  Status runPreFilterRemovePod(CycleState& state, const PodInfo& pod_to_schedule,
                               const PodInfo& pod_to_remove, const NodeInfo& node) const override;

  /// The first PreEnqueue plugin's refusal, with its name; success when every one lets the pod
  /// into the active queue. Thread-safe.
  Status runPreEnqueuePlugins(const PodInfo& pod) const;
  bool hasPreEnqueuePlugins() const { return !pre_enqueues_.empty(); }

  /// The first non-success status, with the failing plugin's name. Plugins answering Skip are
  /// not failures: they go into state.skip_filter_plugins (their Filter and AddPod/RemovePod
  /// are then left out for the cycle, as kube-scheduler 1.27+ does).
  Status runPreFilterPlugins(CycleState& state, const PodInfo& pod);
  /// The PreFilter plugins' BeforePreFilter transformers, in order; their replacement
  /// NodeInfos are appended to `replacements` for the caller to swap in for the cycle.
  Status runPreFilterTransformers(CycleState& state, const PodInfo& pod, const Snapshot& snapshot,
                                  std::vector<std::shared_ptr<const NodeInfo>>& replacements);
  /// Every node's filter verdict in parallel, stopping once `wanted` nodes have passed: the
  /// nodes that passed (in snapshot order from `start`), and for each node that failed before
  /// the wanted-th fit its status. A kError status anywhere ends the pass with that error.
  /// `processed` is how many nodes from `start` up to the wanted-th fit were looked at (the
  /// next cycle's start index). Reuses the framework's scratch: calls from one thread at a
  /// time (the scheduling thread).
  struct FilterOutcome {
    std::vector<const NodeInfo*> feasible;
    NodeStatusMap failed;
    Status error;
    std::size_t processed = 0;
  };
  FilterOutcome findNodesThatPassFilters(const CycleState& state, const PodInfo& pod,
                                         std::size_t start, std::size_t wanted);
  Status runPostFilterPlugins(CycleState& state, const PodInfo& pod, const NodeStatusMap& failed,
                              PostFilterResult& result);
  /// A plugin answering Skip goes into state.skip_score_plugins; any other non-success is an
  /// error.
  Status runPreScorePlugins(CycleState& state, const PodInfo& pod,
                            const std::vector<const NodeInfo*>& nodes);
  /// Each node's weighted sum over Score plugins (scores normalised to [0, 100] first), those
  /// whose PreScore answered Skip left out. With no Score plugin configured every node scores
  /// 1, as upstream. Reuses the framework's scratch, as findNodesThatPassFilters.
  kube::Expected<std::vector<NodeScore>> runScorePlugins(const CycleState& state,
                                                         const PodInfo& pod,
                                                         const std::vector<const NodeInfo*>& nodes);
  /// One Score plugin's part in the scores (koord explain).
  struct PluginScores {
    std::string plugin;
    std::int64_t weight = 1;
    /// Normalised, in [0, 100], in the order of the nodes given; a node's total adds
    /// weight x score over the plugins.
    std::vector<std::int64_t> scores;
  };
  /// Each Score plugin's scores on `nodes` in plugin order, serially and untimed, leaving out
  /// the plugins PreScore skipped (call runPreScorePlugins first): what runScorePlugins sums.
  kube::Expected<std::vector<PluginScores>> scoreByPlugin(
      const CycleState& state, const PodInfo& pod, const std::vector<const NodeInfo*>& nodes) const;
  Status runReservePlugins(CycleState& state, const PodInfo& pod, const std::string& node);
  /// In reverse order, every Reserve plugin (also those after the one that failed).
  void runUnreservePlugins(CycleState& state, const PodInfo& pod, const std::string& node);
  /// A rejection is Unschedulable; kWait carries the longest timeout among waiting plugins.
  /// Success, a rejection, or kWait with the plugins that asked to wait (`waits`).
  Status runPermitPlugins(CycleState& state, const PodInfo& pod, const std::string& node,
                          std::vector<PluginWait>& waits);
  /// Pods this profile holds at Permit.
  WaitingPods* waitingPods() override { return &waiting_pods_; }
  metrics::Registry* metricsRegistry() override { return metrics_; }
  std::span<NUMATopologyHintProvider* const> numaHintProviders() const override {
    return numa_hint_providers_;
  }
  void activatePods(const std::vector<std::string>& keys) override {
    if (activator_ && !keys.empty())
      activator_(keys);
  }
  void requeueUnschedulable() override {
    if (requeue_)
      requeue_();
  }
  /// Where activatePods and requeueUnschedulable go (the scheduler's queue); set once, before
  /// scheduling.
  void setQueueHooks(std::function<void(const std::vector<std::string>&)> activator,
                     std::function<void()> requeue) {
    activator_ = std::move(activator);
    requeue_ = std::move(requeue);
  }
  /// The configured scheduler extenders (shared by every profile; they outlive the framework);
  /// null when none. An interested extender with a bind verb binds instead of the Bind plugins;
  /// DefaultPreemption reaches them through extenders().
  void setExtenders(Extenders* extenders) { extenders_ = extenders; }
  Extenders* extenders() const override { return extenders_; }
  /// PreBind plugins one after another, then Bind plugins until one does not answer kSkip.
  void runPreBindAndBind(std::shared_ptr<CycleState> state, std::shared_ptr<const PodInfo> pod,
                         std::string node, StatusCallback done);
  void runPostBindPlugins(CycleState& state, const PodInfo& pod, const std::string& node);

  /// Every plugin the profile built, once each (the scheduler looks for AssignedPodListeners).
  const std::vector<std::shared_ptr<Plugin>>& allPlugins() const { return owned_; }

  /// The share of cycles whose plugin calls are timed (upstream: 10); 100 times every cycle
  /// (the in-process benchmark's per-plugin figures). Before scheduling.
  void setPluginMetricsSamplePercent(int percent);

  bool hasFilterPlugins() const { return !filters_.empty(); }
  bool hasScorePlugins() const { return !scores_.empty(); }
  bool hasPostFilterPlugins() const { return !post_filters_.empty(); }

 private:
  Framework(const ClusterView& cluster, Parallelizer& parallelizer)
      : cluster_(cluster), parallelizer_(parallelizer) {}
  void runPreBind(std::size_t i, std::shared_ptr<CycleState> state,
                  std::shared_ptr<const PodInfo> pod, std::string node, StatusCallback done);
  void runBind(std::size_t i, std::shared_ptr<CycleState> state, std::shared_ptr<const PodInfo> pod,
               std::string node, StatusCallback done);
  void bindByExtender(std::shared_ptr<CycleState> state, std::shared_ptr<const PodInfo> pod,
                      std::string node, StatusCallback done);
  // The extension points' bodies; the public run* functions time them.
  Status preFilter(CycleState& state, const PodInfo& pod);
  FilterOutcome filterNodes(const CycleState& state, const PodInfo& pod, std::size_t start,
                            std::size_t wanted);
  Status postFilter(CycleState& state, const PodInfo& pod, const NodeStatusMap& failed,
                    PostFilterResult& result);
  Status preScore(CycleState& state, const PodInfo& pod, const std::vector<const NodeInfo*>& nodes);
  kube::Expected<std::vector<NodeScore>> score(const CycleState& state, const PodInfo& pod,
                                               const std::vector<const NodeInfo*>& nodes);
  Status reserve(CycleState& state, const PodInfo& pod, const std::string& node);
  Status permit(CycleState& state, const PodInfo& pod, const std::string& node,
                std::vector<PluginWait>& waits);
  /// The plugin's place in owned_ (its label in the plugin series).
  std::size_t indexOf(const Plugin* plugin) const;
  /// fn() (one plugin call), timed into the plugin series when the cycle is sampled.
  template <typename Fn>
  auto timed(const CycleState& state, const Plugin* plugin, MetricPoint point, Fn&& fn) const;
  /// fn() (one extension point's run), timed into the extension-point series.
  template <typename Fn>
  auto timedPoint(MetricPoint point, Fn&& fn) const;

  const ClusterView& cluster_;
  Parallelizer& parallelizer_;
  const Snapshot* snapshot_ = nullptr;
  std::string scheduler_name_;
  config::EffectivePlugins effective_;
  /// Every built plugin by name; the per-point lists point into these.
  std::vector<std::shared_ptr<Plugin>> owned_;
  QueueSortPlugin* queue_sort_ = nullptr;
  std::vector<const PreEnqueuePlugin*> pre_enqueues_;
  /// A plugin at a point, with its bit in the CycleState's skip sets (its index in owned_).
  template <typename T>
  struct Indexed {
    T* plugin;
    PluginBits bit;
  };
  std::vector<Indexed<PreFilterPlugin>> pre_filters_;
  std::vector<PreFilterTransformer*> transformers_;
  std::vector<Indexed<FilterPlugin>> filters_;
  std::vector<PostFilterPlugin*> post_filters_;
  std::vector<Indexed<PreScorePlugin>> pre_scores_;
  struct WeightedScore {
    ScorePlugin* plugin;
    std::int64_t weight;
    PluginBits bit;
    bool normalizes;  // hasNormalizeScore(), asked once
  };
  std::vector<WeightedScore> scores_;
  std::vector<ReservePlugin*> reserves_;
  std::vector<ReservationNominator*> nominators_;
  std::vector<PermitPlugin*> permits_;
  WaitingPods waiting_pods_;
  std::function<void(const std::vector<std::string>&)> activator_;
  std::function<void()> requeue_;
  metrics::Registry* metrics_ = nullptr;
  /// Null without a metrics registry.
  std::unique_ptr<FrameworkMetrics> fw_metrics_;
  std::vector<PreBindPlugin*> pre_binds_;
  std::vector<BindPlugin*> binds_;
  Extenders* extenders_ = nullptr;
  std::vector<PostBindPlugin*> post_binds_;
  std::vector<NUMATopologyHintProvider*> numa_hint_providers_;

  // Scratch kept across cycles so that a cycle allocates nothing in proportion to the cluster.
  /// Per snapshot index: 0 not looked at, else the filter verdict. All 0 between passes; a pass
  /// clears only the prefix it reached.
  std::vector<std::uint8_t> verdicts_;
  /// The Score plugins not skipped this cycle, and a column of per-node scores for each of
  /// them with NormalizeScore (the others are summed as they come).
  std::vector<WeightedScore> active_scores_;
  std::vector<std::vector<NodeScore>> score_columns_;
};

}  // namespace koord::roles::scheduler
