#include "plugins/loadaware/load_aware.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "framework/snapshot.h"
#include "koord/core/log.h"

namespace koord::roles::scheduler::loadaware {

// What PreFilter works out once per pod for every node's Filter and Score: the pod's estimate
// and the cycle's clock reading (NodeMetric expiry), so neither is redone per node.
class IncomingEstimate final : public StateData {
 public:
  IncomingEstimate(ResourceVector v, TimePoint at) : value(std::move(v)), now(at) {}
  std::unique_ptr<StateData> clone() const override {
    return std::make_unique<IncomingEstimate>(value, now);
  }
  ResourceVector value;
  TimePoint now;
};

namespace {

std::int64_t leastUsedScore(std::int64_t used, std::int64_t capacity) {
  if (capacity <= 0 || used > capacity)
    return 0;
  return (capacity - used) * kMaxNodeScore / capacity;
}

}  // namespace

bool isNodeMetricExpired(const apis::NodeMetric* metric, std::int64_t expiration_seconds,
                         TimePoint now) {
  return metric == nullptr || !metric->update_time ||
         (expiration_seconds > 0 &&
          now - *metric->update_time >= std::chrono::seconds(expiration_seconds));
}

std::int64_t loadAwareScore(std::int64_t dominant_weight, const ResourceVector& weights,
                            const ResourceVector& used, const ResourceVector& allocatable) {
  std::int64_t node_score = 0;
  std::int64_t dominant_score = 0;
  std::int64_t weight_sum = 0;
  if (dominant_weight != 0) {
    dominant_score = kMaxNodeScore;
    weight_sum = dominant_weight;
  }
  for (std::size_t i = 0; i < weights.size(); ++i) {
    const std::int64_t s = leastUsedScore(used[i], allocatable[i]);
    node_score += s * weights[i];
    weight_sum += weights[i];
    dominant_score = std::min(dominant_score, s);
  }
  node_score += dominant_score * dominant_weight;
  if (weight_sum <= 0)
    return 0;
  return node_score / weight_sum;
}

kube::Expected<std::shared_ptr<Plugin>> createLoadAwareScheduling(
    std::shared_ptr<const PluginArgs> args, const FrameworkHandle& handle, NowFn now) {
  std::shared_ptr<const LoadAwareSchedulingArgs> typed;
  if (!args) {
    typed = std::make_shared<const LoadAwareSchedulingArgs>();
  } else {
    typed = std::dynamic_pointer_cast<const LoadAwareSchedulingArgs>(args);
    if (!typed)
      return kube::makeKubeError(fmt::format("{}: want args of type {}", kPluginName, kArgsKind));
  }
  if (auto valid = validateLoadAwareSchedulingArgs(*typed); !valid)
    return kube::makeKubeError(fmt::format("{}: {}", kPluginName, valid.error().message));
  return std::shared_ptr<Plugin>(
      std::make_shared<LoadAwareScheduling>(std::move(typed), handle, std::move(now)));
}

LoadAwareScheduling::LoadAwareScheduling(std::shared_ptr<const LoadAwareSchedulingArgs> args,
                                         const FrameworkHandle& handle, NowFn now)
    : args_(std::move(args)),
      handle_(&handle),
      now_(std::move(now)),
      vectorizer_(vectorizerFor(*args_)),
      estimator_(*args_),
      profile_(profileFromArgs(*args_, vectorizer_)),
      score_weights_(vectorizer_.fromFactors(args_->resource_weights)),
      assign_cache_(std::make_unique<PodAssignCache>(*args_, vectorizer_, now_)) {
  if (args_->dominant_resource_weight == 0 && isZero(score_weights_))
    score_weights_.clear();
}

Status LoadAwareScheduling::preFilter(CycleState& state, const PodInfo& pod) {
  state.write(kIncomingPodEstimatedStateKey,
              std::make_unique<IncomingEstimate>(
                  vectorizer_.fromFactors(estimator_.estimatePod(pod)), now_()));
  // Once per cycle is a fine moment to drop states of nodes that have gone.
  memo_.trim(2 * handle_->snapshot().size() + 16);
  return Status::success();
}

const IncomingEstimate& LoadAwareScheduling::incoming(
    const CycleState& state, const PodInfo& pod, std::optional<IncomingEstimate>& scratch) const {
  if (const auto* e = state.read<IncomingEstimate>(kIncomingPodEstimatedStateKey))
    return *e;
  // PreFilter did not run (a profile that enables only Filter or Score).
  return scratch.emplace(vectorizer_.fromFactors(estimator_.estimatePod(pod)), now_());
}

std::shared_ptr<const NodeUsageState> LoadAwareScheduling::usageState(
    const std::string& node, const std::shared_ptr<const apis::NodeMetric>& metric) const {
  return memo_.get(node, metric, assign_cache_->podsOn(node), vectorizer_,
                   args_->prod_usage_include_sys);
}

// The cache attaches each node's NodeMetric to its NodeInfo; the cluster view answers for
// NodeInfos built without one (tests, a node the cache has no report for yet).
std::shared_ptr<const apis::NodeMetric> LoadAwareScheduling::nodeMetricOf(
    const NodeInfo& node_info) const {
  if (node_info.node_metric)
    return node_info.node_metric;
  return handle_->cluster().nodeMetric(node_info.node->name);
}

Status LoadAwareScheduling::filterNodeUsage(const ResourceVector& thresholds,
                                            const ResourceVector& estimated,
                                            const ResourceVector& allocatable,
                                            bool aggregated) const {
  for (std::size_t i = 0; i < thresholds.size(); ++i) {
    const std::int64_t threshold = thresholds[i];
    const std::int64_t total = allocatable[i];
    if (threshold == 0 || total == 0)
      continue;
    const auto usage = static_cast<std::int64_t>(
        std::round(static_cast<double>(estimated[i]) / static_cast<double>(total) * 100));
    if (usage <= threshold)
      continue;
    const std::string& resource = vectorizer_.names()[i];
    KOORD_VLOG(5, "{} usage {}% exceeds threshold {}% (estimated {} of {})", resource, usage,
               threshold, estimated[i], total);
    return Status::unschedulable(
        fmt::format(fmt::runtime(aggregated ? kReasonAggregatedUsageExceedThreshold
                                            : kReasonUsageExceedThreshold),
                    resource));
  }
  return Status::success();
}

Status LoadAwareScheduling::filter(const CycleState& state, const PodInfo& pod,
                                   const NodeInfo& node_info) const {
  if (!node_info.node)
    return Status::error("node not found");
  if (pod.isDaemonSetPod())
    return Status::success();
  const Node& node = *node_info.node;

  const auto custom = nodeProfile(profile_, node, vectorizer_);
  const UsageThresholdsProfile& profile = custom ? *custom : profile_;
  const bool prod_pod =
      !isZero(profile.prod_usage) && podPriorityWithDefault(pod) == apis::PriorityClass::kProd;
  const ResourceVector* thresholds = &profile.usage;
  const AggregatedUsageProfile* aggregated = nullptr;
  if (prod_pod) {
    thresholds = &profile.prod_usage;
  } else if (profile.aggregated) {
    aggregated = &*profile.aggregated;
    thresholds = &aggregated->thresholds;
  }
  if (isZero(*thresholds))
    return Status::success();

  // Nodes without a koordlet have no NodeMetric: load-aware placement is an optimisation, so
  // they are left to the other plugins.
  auto metric = nodeMetricOf(node_info);
  if (!metric)
    return Status::success();
  std::optional<IncomingEstimate> scratch;
  const IncomingEstimate& in = incoming(state, pod, scratch);
  if (args_->filter_expired_node_metrics &&
      isNodeMetricExpired(metric.get(), args_->node_metric_expiration_seconds, in.now)) {
    if (!args_->enable_schedule_when_node_metrics_expired)
      return Status::unschedulable(std::string(kReasonNodeMetricExpired));
    return Status::success();
  }
  if (!metric->node_metric) {
    KOORD_VLOG(4, "node {}: NodeMetric has no status.nodeMetric yet", node.name);
    return Status::success();
  }

  const ResourceVector allocatable = estimator_.estimateNode(node, vectorizer_);
  const auto usage = usageState(node.name, metric);
  ResourceVector estimated =
      estimatedOfExisting(*usage, vectorizer_, prod_pod,
                          aggregated ? aggregated->duration : std::chrono::nanoseconds(0),
                          aggregated ? std::string_view(aggregated->type) : std::string_view());
  addTo(estimated, in.value);
  return filterNodeUsage(*thresholds, estimated, allocatable, aggregated != nullptr);
}

Status LoadAwareScheduling::score(const CycleState& state, const PodInfo& pod,
                                  const NodeInfo& node_info, std::int64_t& score) const {
  score = 0;
  if (score_weights_.empty())
    return Status::success();
  if (!node_info.node)
    return Status::error("node not found");
  const Node& node = *node_info.node;

  // A node without a fresh report scores 0 rather than failing the pod.
  auto metric = nodeMetricOf(node_info);
  if (!metric)
    return Status::success();
  std::optional<IncomingEstimate> scratch;
  const IncomingEstimate& in = incoming(state, pod, scratch);
  if (isNodeMetricExpired(metric.get(), args_->node_metric_expiration_seconds, in.now) ||
      !metric->node_metric)
    return Status::success();

  const bool prod_pod = args_->score_according_prod_usage &&
                        podPriorityWithDefault(pod) == apis::PriorityClass::kProd;
  std::chrono::nanoseconds aggregated_duration{0};
  std::string_view aggregation_type;
  if (const auto& agg = args_->aggregated;
      !prod_pod && agg && !agg->score_aggregation_type.empty()) {
    aggregated_duration = agg->score_aggregated_duration;
    aggregation_type = agg->score_aggregation_type;
  }
  const ResourceVector allocatable = estimator_.estimateNode(node, vectorizer_);
  const auto usage = usageState(node.name, metric);
  ResourceVector estimated =
      estimatedOfExisting(*usage, vectorizer_, prod_pod, aggregated_duration, aggregation_type);
  addTo(estimated, in.value);
  score = loadAwareScore(args_->dominant_resource_weight, score_weights_, estimated, allocatable);
  return Status::success();
}

Status LoadAwareScheduling::reserve(CycleState& /*state*/, const PodInfo& pod,
                                    const std::string& node) {
  assign_cache_->assign(node, pod, now_());
  return Status::success();
}

void LoadAwareScheduling::unreserve(CycleState& /*state*/, const PodInfo& pod,
                                    const std::string& node) {
  assign_cache_->unassign(node, pod.uid);
}

void LoadAwareScheduling::onAssignedPodAdd(const PodInfo& pod) {
  assign_cache_->onPodAdd(pod, pod.scheduled_at, pod.initialized_at);
}

void LoadAwareScheduling::onAssignedPodUpdate(const PodInfo& old_pod, const PodInfo& new_pod) {
  assign_cache_->onPodUpdate(old_pod, new_pod, new_pod.scheduled_at, new_pod.initialized_at);
}

void LoadAwareScheduling::onAssignedPodDelete(const PodInfo& pod) {
  assign_cache_->onPodDelete(pod);
}

}  // namespace koord::roles::scheduler::loadaware
