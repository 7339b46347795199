// The scheduler plugins' pluginConfig args: the operator's --config file hands each plugin's args
// to its own strict decoder. Byte 0 picks the plugin, byte 1 the configuration's apiVersion (some
// defaults differ by version), the rest is the args' JSON (empty: no args given). What a decoder
// accepts must keep the bounds its header documents; LoadAwareScheduling's args must survive
// being written back out and decoded again unchanged. Accepted args then build the plugin, which
// runs PreFilter, Filter, PreScore and Score on one node, so that the arithmetic the args steer
// sees them; a final score must lie in [0, 100].
#include <boost/json.hpp>

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "framework/plugin_registry.h"
#include "framework/snapshot.h"
#include "koord/apis/node_metric.h"
#include "koord/core/duration.h"
#include "koord/kube/quantity.h"
#include "plugins/loadaware/args.h"
#include "plugins/loadaware/load_aware.h"
#include "plugins/upstream/args_decode.h"
#include "plugins/upstream/defaultpreemption/args.h"
#include "plugins/upstream/interpodaffinity/args.h"
#include "plugins/upstream/noderesources/balanced_allocation.h"
#include "plugins/upstream/noderesources/fit.h"
#include "plugins/upstream/noderesources/least_allocated.h"
#include "plugins/upstream/noderesources/most_allocated.h"
#include "plugins/upstream/podtopologyspread/args.h"
#include "scheduler/fake_handle.h"

namespace {

namespace json = boost::json;
using namespace koord::roles::scheduler;
using koord::kube::Quantity;

// Fixed, not the registry's order, so the seeds keep their meaning when plugins are added. The
// last ones take no args: their decoders must refuse anything but {} and null.
constexpr std::array<std::string_view, 12> kPlugins = {"LoadAwareScheduling",
                                                       "NodeResourcesFit",
                                                       "NodeResourcesLeastAllocated",
                                                       "NodeResourcesMostAllocated",
                                                       "InterPodAffinity",
                                                       "NodeResourcesBalancedAllocation",
                                                       "PodTopologySpread",
                                                       "DefaultPreemption",
                                                       "NodeAffinity",
                                                       "TaintToleration",
                                                       "NodePorts",
                                                       "PrioritySort"};

constexpr std::array<std::string_view, 6> kVersions = {
    "kubescheduler.config.k8s.io/v1beta1",  "kubescheduler.config.k8s.io/v1beta2",
    "kubescheduler.config.k8s.io/v1beta3",  "kubescheduler.config.k8s.io/v1",
    "kubescheduler.config.k8s.io/v1alpha2", ""};

void check(bool ok) {
  if (!ok)
    std::abort();
}

koord::kube::ResourceList resources(std::string_view cpu, std::string_view memory) {
  koord::kube::ResourceList out;
  out.emplace("cpu", *Quantity::parse(cpu));
  out.emplace("memory", *Quantity::parse(memory));
  return out;
}

// One node with a pod already on it, and the NodeMetric LoadAwareScheduling reads for it.
struct World {
  std::shared_ptr<NodeInfo> node = std::make_shared<NodeInfo>();
  std::shared_ptr<koord::apis::NodeMetric> metric = std::make_shared<koord::apis::NodeMetric>();
  PodInfo incoming;
  Snapshot snapshot;

  World() {
    auto n = std::make_shared<Node>();
    n->name = "n1";
    n->labels = {{"kubernetes.io/hostname", "n1"}, {"topology.kubernetes.io/zone", "z1"}};
    n->allocatable = Resource::fromList(resources("32", "64Gi"));
    n->allocatable.allowed_pod_number = 110;
    n->allocatable.setScalar("kubernetes.io/batch-cpu", 16000);
    n->capacity = n->allocatable;
    node->node = n;
    auto existing = std::make_shared<PodInfo>();
    existing->namespace_ = "default";
    existing->name = "running";
    existing->uid = "uid-running";
    existing->node_name = "n1";
    existing->labels = {{"app", "web"}};
    existing->requests = Resource::fromList(resources("4", "8Gi"));
    existing->non_zero_requests = existing->requests;
    existing->limits = existing->requests;
    node->addPod(existing);
    snapshot = Snapshot({node});

    metric->name = "n1";
    metric->update_time = std::chrono::system_clock::now();
    koord::apis::NodeMetricInfo info;
    info.node_usage = resources("12", "20Gi");
    koord::apis::AggregatedUsage agg;
    agg.duration = std::chrono::minutes(5);
    agg.usage.emplace("avg", resources("10", "18Gi"));
    agg.usage.emplace("p95", resources("20", "30Gi"));
    info.aggregated_node_usages.push_back(agg);
    metric->node_metric = info;

    incoming.namespace_ = "default";
    incoming.name = "new";
    incoming.uid = "uid-new";
    incoming.labels = {{"app", "web"}};
    incoming.requests = Resource::fromList(resources("2", "4Gi"));
    incoming.non_zero_requests = incoming.requests;
    incoming.limits = Resource::fromList(resources("4", "4Gi"));
  }
};

World& world() {
  static World w;
  return w;
}

// Every plugin is built on this handle: the world's snapshot, and its NodeMetric in the source
// LoadAwareScheduling declares (the node carries none, so the plugin looks it up there).
testkit::FakeHandle& stubHandle() {
  static testkit::FakeHandle handle(world().snapshot);
  static const bool filled = [] {
    handle.fakeCluster().setObject(loadaware::kNodeMetricSource, "n1",
                                   std::shared_ptr<const koord::apis::NodeMetric>(world().metric));
    return true;
  }();
  (void)filled;
  return handle;
}

// ---- LoadAwareScheduling: written back out with the field names it was decoded from ----

json::object factorsJson(const loadaware::ResourceFactors& factors) {
  json::object o;
  for (const auto& [name, value] : factors)
    o[name] = value;
  return o;
}

json::value loadAwareJson(const loadaware::LoadAwareSchedulingArgs& a) {
  json::object o;
  o["kind"] = "LoadAwareSchedulingArgs";
  o["filterExpiredNodeMetrics"] = a.filter_expired_node_metrics;
  o["nodeMetricExpirationSeconds"] = a.node_metric_expiration_seconds;
  o["enableScheduleWhenNodeMetricsExpired"] = a.enable_schedule_when_node_metrics_expired;
  o["resourceWeights"] = factorsJson(a.resource_weights);
  o["dominantResourceWeight"] = a.dominant_resource_weight;
  o["usageThresholds"] = factorsJson(a.usage_thresholds);
  o["prodUsageThresholds"] = factorsJson(a.prod_usage_thresholds);
  o["prodUsageIncludeSys"] = a.prod_usage_include_sys;
  o["scoreAccordingProdUsage"] = a.score_according_prod_usage;
  o["estimator"] = a.estimator;
  o["estimatedScalingFactors"] = factorsJson(a.estimated_scaling_factors);
  if (a.estimated_seconds_after_pod_scheduled)
    o["estimatedSecondsAfterPodScheduled"] = *a.estimated_seconds_after_pod_scheduled;
  if (a.estimated_seconds_after_initialized)
    o["estimatedSecondsAfterInitialized"] = *a.estimated_seconds_after_initialized;
  o["allowCustomizeEstimation"] = a.allow_customize_estimation;
  if (a.aggregated) {
    const auto& g = *a.aggregated;
    o["aggregated"] = json::object{
        {"usageThresholds", factorsJson(g.usage_thresholds)},
        {"usageAggregationType", g.usage_aggregation_type},
        {"usageAggregatedDuration", koord::formatGoDuration(g.usage_aggregated_duration)},
        {"scoreAggregationType", g.score_aggregation_type},
        {"scoreAggregatedDuration", koord::formatGoDuration(g.score_aggregated_duration)},
    };
  }
  json::array supported;
  for (const auto& name : a.supported_resources)
    supported.emplace_back(name);
  o["supportedResources"] = std::move(supported);
  return o;
}

bool sameAggregated(const loadaware::LoadAwareSchedulingAggregatedArgs& a,
                    const loadaware::LoadAwareSchedulingAggregatedArgs& b) {
  return a.usage_thresholds == b.usage_thresholds &&
         a.usage_aggregation_type == b.usage_aggregation_type &&
         a.usage_aggregated_duration == b.usage_aggregated_duration &&
         a.score_aggregation_type == b.score_aggregation_type &&
         a.score_aggregated_duration == b.score_aggregated_duration;
}

bool sameLoadAware(const loadaware::LoadAwareSchedulingArgs& a,
                   const loadaware::LoadAwareSchedulingArgs& b) {
  if (a.aggregated.has_value() != b.aggregated.has_value())
    return false;
  if (a.aggregated && !sameAggregated(*a.aggregated, *b.aggregated))
    return false;
  return a.filter_expired_node_metrics == b.filter_expired_node_metrics &&
         a.node_metric_expiration_seconds == b.node_metric_expiration_seconds &&
         a.enable_schedule_when_node_metrics_expired ==
             b.enable_schedule_when_node_metrics_expired &&
         a.resource_weights == b.resource_weights &&
         a.dominant_resource_weight == b.dominant_resource_weight &&
         a.usage_thresholds == b.usage_thresholds &&
         a.prod_usage_thresholds == b.prod_usage_thresholds &&
         a.prod_usage_include_sys == b.prod_usage_include_sys &&
         a.score_according_prod_usage == b.score_according_prod_usage &&
         a.estimator == b.estimator && a.estimated_scaling_factors == b.estimated_scaling_factors &&
         a.estimated_seconds_after_pod_scheduled == b.estimated_seconds_after_pod_scheduled &&
         a.estimated_seconds_after_initialized == b.estimated_seconds_after_initialized &&
         a.allow_customize_estimation == b.allow_customize_estimation &&
         a.supported_resources == b.supported_resources;
}

void checkLoadAware(const loadaware::LoadAwareSchedulingArgs& a, std::string_view version) {
  check(validateLoadAwareSchedulingArgs(a).has_value());
  const json::value written = loadAwareJson(a);
  auto again = loadaware::decodeLoadAwareSchedulingArgs(&written, version);
  check(again.has_value() && sameLoadAware(a, *again));
}

// ---- the upstream plugins: the bounds their headers promise ----

bool weightsWithin(const std::vector<upstream::ResourceSpec>& specs, std::int64_t min,
                   std::int64_t max) {
  for (const auto& s : specs) {
    if (s.name.empty() || s.weight < min || s.weight > max)
      return false;
  }
  return true;
}

void checkFit(const upstream::NodeResourcesFitArgs& a, bool v1beta1) {
  check(a.scoring_strategy.has_value() != v1beta1);
  if (!a.scoring_strategy)
    return;
  const auto& s = *a.scoring_strategy;
  check(!s.resources.empty() && weightsWithin(s.resources, 1, kMaxNodeScore));
  if (s.type == upstream::ScoringStrategyType::kRequestedToCapacityRatio)
    check(!s.shape.empty());
  for (std::size_t i = 0; i < s.shape.size(); ++i) {
    const auto& p = s.shape[i];
    check(p.utilization >= 0 && p.utilization <= 100);
    check(p.score >= 0 && p.score <= kMaxNodeScore);
    check(i == 0 || s.shape[i - 1].utilization < p.utilization);
  }
}

void checkSpread(const upstream::PodTopologySpreadArgs& a) {
  if (a.defaulting_type == upstream::SpreadDefaultingType::kSystem)
    check(a.default_constraints.empty());
  for (std::size_t i = 0; i < a.default_constraints.size(); ++i) {
    const auto& c = a.default_constraints[i];
    check(c.max_skew > 0 && !c.topology_key.empty());
    for (std::size_t j = 0; j < i; ++j) {
      const auto& e = a.default_constraints[j];
      check(e.topology_key != c.topology_key || e.when_unsatisfiable != c.when_unsatisfiable);
    }
  }
}

void checkTyped(std::string_view plugin, const std::shared_ptr<const PluginArgs>& args,
                std::string_view version) {
  const bool v1beta1 = upstream::isV1beta1OrOlder(version);
  if (plugin == "LoadAwareScheduling") {
    auto a = std::dynamic_pointer_cast<const loadaware::LoadAwareSchedulingArgs>(args);
    check(a != nullptr);
    checkLoadAware(*a, version);
  } else if (plugin == "NodeResourcesFit") {
    auto a = std::dynamic_pointer_cast<const upstream::NodeResourcesFitArgs>(args);
    check(a != nullptr);
    checkFit(*a, v1beta1);
  } else if (plugin == "NodeResourcesLeastAllocated") {
    auto a = std::dynamic_pointer_cast<const upstream::NodeResourcesLeastAllocatedArgs>(args);
    check(a != nullptr && !a->resources.empty() && weightsWithin(a->resources, 1, 100));
  } else if (plugin == "NodeResourcesMostAllocated") {
    auto a = std::dynamic_pointer_cast<const upstream::NodeResourcesMostAllocatedArgs>(args);
    check(a != nullptr && !a->resources.empty() && weightsWithin(a->resources, 1, 100));
  } else if (plugin == "NodeResourcesBalancedAllocation") {
    auto a = std::dynamic_pointer_cast<const upstream::NodeResourcesBalancedAllocationArgs>(args);
    check(a != nullptr && weightsWithin(a->resources, 1, 1));
  } else if (plugin == "InterPodAffinity") {
    auto a =
        std::dynamic_pointer_cast<const upstream::interpodaffinity::InterPodAffinityArgs>(args);
    check(a != nullptr && a->hard_pod_affinity_weight >= 0 && a->hard_pod_affinity_weight <= 100);
  } else if (plugin == "PodTopologySpread") {
    auto a = std::dynamic_pointer_cast<const upstream::PodTopologySpreadArgs>(args);
    check(a != nullptr);
    checkSpread(*a);
  } else if (plugin == "DefaultPreemption") {
    auto a = std::dynamic_pointer_cast<const upstream::DefaultPreemptionArgs>(args);
    check(a != nullptr);
    check(a->min_candidate_nodes_percentage >= 0 && a->min_candidate_nodes_percentage <= 100);
    check(a->min_candidate_nodes_absolute >= 0);
    check(a->min_candidate_nodes_percentage != 0 || a->min_candidate_nodes_absolute != 0);
  } else if (plugin != "NodeAffinity") {
    check(args == nullptr);  // plugins without args
  }
}

// The extension points in the framework's order, on the one node; skipped points end the run as
// the framework would end it.
void runPlugin(Plugin& plugin) {
  World& w = world();
  CycleState state;
  if (auto* pre = dynamic_cast<PreFilterPlugin*>(&plugin)) {
    Status s = pre->preFilter(state, w.incoming);
    if (!s.ok())
      return;
  }
  if (auto* filter = dynamic_cast<FilterPlugin*>(&plugin)) {
    if (!filter->filter(state, w.incoming, *w.node).ok())
      return;
  }
  auto* scorer = dynamic_cast<ScorePlugin*>(&plugin);
  if (scorer == nullptr)
    return;
  if (auto* pre = dynamic_cast<PreScorePlugin*>(&plugin)) {
    const std::vector<const NodeInfo*> nodes = {w.node.get()};
    if (!pre->preScore(state, w.incoming, nodes).ok())
      return;
  }
  std::int64_t score = 0;
  if (!scorer->score(state, w.incoming, *w.node, score).ok())
    return;
  if (scorer->hasNormalizeScore()) {
    std::vector<NodeScore> scores = {{w.node->name(), score}};
    if (!scorer->normalizeScore(state, w.incoming, scores).ok())
      return;
    score = scores[0].score;
  }
  check(score >= kMinNodeScore && score <= kMaxNodeScore);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2)
    return 0;
  const std::string_view plugin = kPlugins[data[0] % kPlugins.size()];
  const std::string_view version = kVersions[data[1] % kVersions.size()];
  const std::string_view text(reinterpret_cast<const char*>(data) + 2, size - 2);
  const PluginFactory* factory = inTreeRegistry().find(plugin);
  check(factory != nullptr);  // a renamed plugin: the table above must follow

  json::value args;
  const json::value* given = nullptr;
  if (!text.empty()) {
    boost::system::error_code ec;
    args = json::parse(text, ec);
    if (ec)
      return 0;
    given = &args;
  }
  auto decoded = factory->decode_args(given, version);
  if (!decoded)
    return 0;
  checkTyped(plugin, *decoded, version);

  auto built = factory->create(*decoded, stubHandle());
  if (!built)
    return 0;
  runPlugin(**built);
  return 0;
}
