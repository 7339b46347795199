#include "plugins/loadaware/load_aware.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "framework/snapshot.h"
#include "koord/core/log.h"
#include "koord/core/saturating.h"

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

struct LoadAwareScheduling::Incoming {
  const std::int64_t* value;
  TimePoint now;
};

namespace {

const StateKey kIncomingKey{kIncomingPodEstimatedStateKey};

// The incoming pod's estimate when PreFilter did not run, remembered per thread with what it
// was made from: every other node of the cycle compares a few integers instead of estimating.
struct IncomingMemo {
  std::uint64_t owner = 0;  // 0: empty
  Resource requests;
  Resource limits;
  apis::PriorityClass priority = apis::PriorityClass::kNone;
  /// The scaling-factor annotation (nullopt: absent), when the args let pods customise.
  std::optional<std::string> custom_factors;
  ResourceVector value;
};

thread_local IncomingMemo t_incoming;
// t_incoming's address: a trivially constructed thread_local is read without the guarded
// wrapper that t_incoming's accesses go through.
thread_local IncomingMemo* t_incoming_ptr = nullptr;

const std::string* customFactorsOf(const PodInfo& pod) {
  auto it = pod.annotations.find(kAnnotationCustomEstimatedScalingFactors);
  return it == pod.annotations.end() ? nullptr : &it->second;
}

// Resource's operator==, the usual case (no scalar resources) without a call.
bool sameResource(const Resource& a, const Resource& b) {
  return a.milli_cpu == b.milli_cpu && a.memory == b.memory &&
         a.ephemeral_storage == b.ephemeral_storage &&
         a.allowed_pod_number == b.allowed_pod_number && a.scalar.size() == b.scalar.size() &&
         (a.scalar.empty() || a.scalar == b.scalar);
}

bool sameCustomFactors(const std::optional<std::string>& memo, const std::string* pod) {
  return memo ? pod != nullptr && *memo == *pod : pod == nullptr;
}

std::int64_t leastUsedScore(std::int64_t used, std::int64_t capacity) {
  if (capacity <= 0 || used > capacity)
    return 0;
  const std::int64_t free_share = (capacity - used) * kMaxNodeScore;
  if (used < 0 || capacity > (std::int64_t{1} << 52))
    return free_share / capacity;
  // Score runs this on every node: a floating-point quotient (within one of the integer one,
  // then corrected with multiplications) waits less than a 64-bit integer division.
  auto q =
      static_cast<std::int64_t>(static_cast<double>(free_share) / static_cast<double>(capacity));
  if (q * capacity > free_share)
    --q;
  else if ((q + 1) * capacity <= free_share)
    ++q;
  return q;
}

}  // namespace

bool isNodeMetricExpired(const apis::NodeMetric* metric, std::int64_t expiration_seconds,
                         TimePoint now) {
  return metric == nullptr || isNodeMetricExpired(metric->update_time, expiration_seconds, now);
}

bool isNodeMetricExpired(const std::optional<TimePoint>& update_time,
                         std::int64_t expiration_seconds, TimePoint now) {
  return !update_time || (expiration_seconds > 0 && saturatingSub(now, *update_time) >=
                                                        saturatingSeconds(expiration_seconds));
}

std::int64_t loadAwareScore(std::int64_t dominant_weight, const ResourceVector& weights,
                            const std::int64_t* existing, const std::int64_t* incoming,
                            const std::int64_t* allocatable) {
  std::int64_t node_score = 0;
  std::int64_t dominant_score = 0;
  std::int64_t weight_sum = 0;
  if (dominant_weight != 0) {
    dominant_score = kMaxNodeScore;
    weight_sum = dominant_weight;
  }
  for (std::size_t i = 0; i < weights.size(); ++i) {
    const std::int64_t used = existing[i] + (incoming ? incoming[i] : 0);
    const std::int64_t s = leastUsedScore(used, allocatable[i]);
    node_score += s * weights[i];
    weight_sum += weights[i];
    dominant_score = std::min(dominant_score, s);
  }
  node_score += dominant_score * dominant_weight;
  if (weight_sum <= 0)
    return 0;
  return node_score / weight_sum;
}

std::int64_t loadAwareScore(std::int64_t dominant_weight, const ResourceVector& weights,
                            const ResourceVector& used, const ResourceVector& allocatable) {
  return loadAwareScore(dominant_weight, weights, used.data(), nullptr, allocatable.data());
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
      metrics_(handle.cluster().source<apis::NodeMetric>(kNodeMetricSource)),
      now_(std::move(now)),
      vectorizer_(vectorizerFor(*args_)),
      estimator_(*args_),
      vector_estimator_(*args_, vectorizer_),
      profile_(profileFromArgs(*args_, vectorizer_)),
      score_weights_(vectorizer_.fromFactors(args_->resource_weights)),
      assign_cache_(std::make_unique<PodAssignCache>(*args_, vectorizer_, now_)),
      views_owner_(newNodeViewOwner()) {
  if (args_->dominant_resource_weight == 0 && isZero(score_weights_))
    score_weights_.clear();
  if (const auto& agg = args_->aggregated; agg && !agg->score_aggregation_type.empty()) {
    score_aggregation_type_ = agg->score_aggregation_type;
    score_aggregated_duration_ = agg->score_aggregated_duration;
  }
}

Status LoadAwareScheduling::preFilter(CycleState& state, const PodInfo& pod) {
  ResourceVector estimate = vectorizer_.empty();
  vector_estimator_.estimate(pod, estimate.data());
  state.write(kIncomingKey, std::make_unique<IncomingEstimate>(std::move(estimate), now_()));
  return Status::success();
}

LoadAwareScheduling::Incoming LoadAwareScheduling::incoming(const CycleState& state,
                                                            const PodInfo& pod) const {
  if (const auto* e = state.read<IncomingEstimate>(kIncomingKey))
    return Incoming{e->value.data(), e->now};
  // PreFilter did not run (a profile that enables only Filter and Score, as Koordinator's own
  // configuration does): the estimate comes from this thread's memo, made again only when the
  // pod's requests, limits, priority or factors differ from the last one's.
  if (t_incoming_ptr == nullptr)
    t_incoming_ptr = &t_incoming;
  IncomingMemo& memo = *t_incoming_ptr;
  const apis::PriorityClass priority = podPriorityWithDefault(pod);
  const std::string* custom = args_->allow_customize_estimation ? customFactorsOf(pod) : nullptr;
  if (memo.owner != views_owner_ || memo.priority != priority ||
      !sameResource(memo.requests, pod.requests) || !sameResource(memo.limits, pod.limits) ||
      !sameCustomFactors(memo.custom_factors, custom)) {
    memo.owner = 0;
    memo.requests = pod.requests;
    memo.limits = pod.limits;
    memo.priority = priority;
    memo.custom_factors = custom ? std::optional<std::string>(*custom) : std::nullopt;
    memo.value.assign(vectorizer_.size(), 0);
    vector_estimator_.estimate(pod, memo.value.data());
    memo.owner = views_owner_;
  }
  return Incoming{memo.value.data(), now_()};
}

// The cache attaches each node's NodeMetric to its NodeInfo; the declared source answers for
// NodeInfos built without one (tests, a node the cache has no report for yet).
const std::shared_ptr<const apis::NodeMetric>& LoadAwareScheduling::nodeMetricOf(
    const NodeInfo& node_info, std::shared_ptr<const apis::NodeMetric>& holder) const {
  if (node_info.node_metric)
    return node_info.node_metric;
  if (metrics_ != nullptr)
    holder = metrics_->get(node_info.node->name);
  return holder;
}

NodeView& LoadAwareScheduling::nodeView(const NodeInfo& node_info) const {
  if (NodeView* view = threadNodeViews(views_owner_).find(node_info.node.get()))
    return *view;
  return makeView(node_info);
}

NodeView& LoadAwareScheduling::makeView(const NodeInfo& node_info) const {
  NodeViewTable& table = threadNodeViews(views_owner_);
  const Snapshot& snapshot = handle_->snapshot();
  if (table.size() >= 2 * snapshot.size() + 16) {
    // Views of replaced Node objects and of nodes that have gone are dropped all at once: a
    // cluster's worth is rebuilt within a cycle or two.
    table.clear();
  } else if (table.inserted() >= std::max<std::size_t>(64, snapshot.size() / 8) &&
             2 * table.size() >= snapshot.size()) {
    // Once a good part of the cluster has views, they go into snapshot order (dropping those of
    // Nodes no longer listed), so that the walk finds each one next to the last.
    std::vector<const Node*> order;
    order.reserve(snapshot.size());
    for (const auto& info : snapshot.nodes())
      order.push_back(info->node.get());
    table.reorder(order);
  }
  const std::size_t n = vectorizer_.size();
  NodeView& view = table.insert(node_info.node, n);
  const Node& node = *node_info.node;
  const ResourceVector allocatable = estimator_.estimateNode(node, vectorizer_);
  std::copy(allocatable.begin(), allocatable.end(), view.mutableVector(kAllocatable, n));
  if (auto custom = nodeProfile(profile_, node, vectorizer_))
    view.cold->custom_profile = std::make_unique<UsageThresholdsProfile>(std::move(*custom));
  view.profile = view.cold->custom_profile ? view.cold->custom_profile.get() : &profile_;
  auto limits = [&](NodeVector v, const ResourceVector& thresholds) {
    std::int64_t* out = view.mutableVector(v, n);
    for (std::size_t i = 0; i < n; ++i)
      out[i] = usageLimit(i < thresholds.size() ? thresholds[i] : 0, allocatable[i]);
  };
  view.checks_usage = !isZero(view.profile->usage);
  view.checks_prod = !isZero(view.profile->prod_usage);
  view.checks_aggregated =
      view.profile->aggregated && !isZero(view.profile->aggregated->thresholds);
  limits(kUsageLimit, view.profile->usage);
  limits(kProdLimit, view.profile->prod_usage);
  if (view.profile->aggregated)
    limits(kAggregatedLimit, view.profile->aggregated->thresholds);
  view.cold->pods = assign_cache_->entry(node.name);
  if (view.cold->pods)
    view.pods_generation_now = &view.cold->pods->generation();
  return view;
}

void LoadAwareScheduling::refreshLoad(NodeView& view,
                                      const std::shared_ptr<const apis::NodeMetric>& metric) const {
  const std::uint64_t generation_now =
      view.pods_generation_now ? view.pods_generation_now->load(std::memory_order_acquire) : 0;
  if (view.metric_key != metric.get() || generation_now != view.pods_generation)
    rebuildLoad(view, metric);
}

void LoadAwareScheduling::rebuildLoad(NodeView& view,
                                      const std::shared_ptr<const apis::NodeMetric>& metric) const {
  std::shared_ptr<const AssignedPods> pods;
  std::uint64_t generation = 0;
  if (view.cold->pods)
    std::tie(pods, generation) = assign_cache_->read(*view.cold->pods);
  const NodeUsageState usage =
      buildNodeUsageState(*metric, pods.get(), vectorizer_, args_->prod_usage_include_sys);
  const std::size_t n = vectorizer_.size();
  auto store = [&](NodeVector v, const ResourceVector& values) {
    std::copy(values.begin(), values.end(), view.mutableVector(v, n));
  };
  if (const auto& agg = view.profile->aggregated)
    store(kFilterExisting,
          estimatedOfExisting(usage, vectorizer_, false, agg->duration, agg->type));
  else
    store(kFilterExisting, estimatedOfExisting(usage, vectorizer_, false, {}, {}));
  store(kProdExisting, estimatedOfExisting(usage, vectorizer_, true, {}, {}));
  store(kScoreExisting, estimatedOfExisting(usage, vectorizer_, false, score_aggregated_duration_,
                                            score_aggregation_type_));
  view.cold->metric = metric;
  view.metric_key = metric.get();
  view.metric_reported = metric->update_time.has_value();
  view.metric_update_time = metric->update_time.value_or(TimePoint{});
  view.has_node_metric = metric->node_metric.has_value();
  view.pods_generation = generation;
}

Status LoadAwareScheduling::filterNodeUsage(
    const ResourceVector& thresholds, const std::int64_t* limits, const std::int64_t* existing,
    const std::int64_t* incoming, const std::int64_t* allocatable, bool aggregated) const {
  for (std::size_t i = 0; i < thresholds.size(); ++i) {
    const std::int64_t estimated = existing[i] + incoming[i];
    const bool exact = limits[i] != kUseFormula && estimated >= 0 && estimated <= kExactRange;
    if (exact ? estimated <= limits[i] : withinThreshold(thresholds[i], allocatable[i], estimated))
      continue;
    const std::string& resource = vectorizer_.names()[i];
    KOORD_VLOG(
        5, "{} usage {}% exceeds threshold {}% (estimated {} of {})", resource,
        std::round(static_cast<double>(estimated) / static_cast<double>(allocatable[i]) * 100),
        thresholds[i], estimated, allocatable[i]);
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

  NodeView& view = nodeView(node_info);
  const UsageThresholdsProfile& profile = *view.profile;
  const bool prod_pod =
      view.checks_prod && podPriorityWithDefault(pod) == apis::PriorityClass::kProd;
  const ResourceVector* thresholds = &profile.usage;
  const AggregatedUsageProfile* aggregated = nullptr;
  bool checks = view.checks_usage;
  if (prod_pod) {
    thresholds = &profile.prod_usage;
    checks = true;
  } else if (profile.aggregated) {
    aggregated = &*profile.aggregated;
    thresholds = &aggregated->thresholds;
    checks = view.checks_aggregated;
  }
  if (!checks)
    return Status::success();

  // Nodes without a koordlet have no NodeMetric: load-aware placement is an optimisation, so
  // they are left to the other plugins.
  std::shared_ptr<const apis::NodeMetric> holder;
  const auto& metric = nodeMetricOf(node_info, holder);
  if (!metric)
    return Status::success();
  // The view answers for the report's freshness too, so the NodeMetric itself is not read.
  refreshLoad(view, metric);
  const Incoming in = incoming(state, pod);
  if (args_->filter_expired_node_metrics &&
      isNodeMetricExpired(view.metricUpdateTime(), args_->node_metric_expiration_seconds, in.now)) {
    if (!args_->enable_schedule_when_node_metrics_expired)
      return Status::unschedulable(std::string(kReasonNodeMetricExpired));
    return Status::success();
  }
  if (!view.has_node_metric) {
    KOORD_VLOG(4, "node {}: NodeMetric has no status.nodeMetric yet", node_info.node->name);
    return Status::success();
  }

  const std::size_t n = vectorizer_.size();
  const NodeVector limits = prod_pod ? kProdLimit : aggregated ? kAggregatedLimit : kUsageLimit;
  return filterNodeUsage(*thresholds, view.vector(limits, n),
                         view.vector(prod_pod ? kProdExisting : kFilterExisting, n), in.value,
                         view.vector(kAllocatable, n), aggregated != nullptr);
}

Status LoadAwareScheduling::score(const CycleState& state, const PodInfo& pod,
                                  const NodeInfo& node_info, std::int64_t& score) const {
  score = 0;
  if (score_weights_.empty())
    return Status::success();
  if (!node_info.node)
    return Status::error("node not found");

  // A node without a fresh report scores 0 rather than failing the pod.
  std::shared_ptr<const apis::NodeMetric> holder;
  const auto& metric = nodeMetricOf(node_info, holder);
  if (!metric)
    return Status::success();
  NodeView& view = nodeView(node_info);
  refreshLoad(view, metric);
  const Incoming in = incoming(state, pod);
  if (isNodeMetricExpired(view.metricUpdateTime(), args_->node_metric_expiration_seconds, in.now) ||
      !view.has_node_metric)
    return Status::success();

  const bool prod_pod = args_->score_according_prod_usage &&
                        podPriorityWithDefault(pod) == apis::PriorityClass::kProd;
  const std::size_t n = vectorizer_.size();
  score = loadAwareScore(args_->dominant_resource_weight, score_weights_,
                         view.vector(prod_pod ? kProdExisting : kScoreExisting, n), in.value,
                         view.vector(kAllocatable, n));
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
