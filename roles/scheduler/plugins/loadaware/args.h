// LoadAwareSchedulingArgs: the plugin's pluginConfig args with Koordinator's field names,
// defaults and validation, decoded strictly from the configuration's JSON.
#pragma once

#include <boost/json/fwd.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "framework/plugin.h"
#include "koord/kube/error.h"
#include "plugins/loadaware/resource_vector.h"

namespace koord::roles::scheduler::loadaware {

/// Percentile-based filtering and scoring (aggregatedNodeUsages of the NodeMetric).
struct LoadAwareSchedulingAggregatedArgs {
  ResourceFactors usage_thresholds;
  /// "avg", "p50", "p90", "p95", "p99"; empty: filtering does not use aggregated usage.
  std::string usage_aggregation_type;
  /// Zero: the longest duration the NodeMetric reports.
  std::chrono::nanoseconds usage_aggregated_duration{0};
  /// Empty: scoring does not use aggregated usage.
  std::string score_aggregation_type;
  std::chrono::nanoseconds score_aggregated_duration{0};
};

/// Default-constructed, it holds Koordinator's defaults (what decoding `null` gives).
struct LoadAwareSchedulingArgs : PluginArgs {
  bool filter_expired_node_metrics = true;
  std::int64_t node_metric_expiration_seconds = 180;
  bool enable_schedule_when_node_metrics_expired = false;
  ResourceFactors resource_weights{{"cpu", 1}, {"memory", 1}};
  std::int64_t dominant_resource_weight = 0;
  ResourceFactors usage_thresholds{{"cpu", 65}, {"memory", 95}};
  /// Empty: prod pods are filtered like any other.
  ResourceFactors prod_usage_thresholds;
  bool prod_usage_include_sys = false;
  bool score_according_prod_usage = false;
  /// Koordinator knows only its default estimator and falls back to it for any name.
  std::string estimator;
  ResourceFactors estimated_scaling_factors{{"cpu", 85}, {"memory", 70}};
  std::optional<std::int64_t> estimated_seconds_after_pod_scheduled;
  std::optional<std::int64_t> estimated_seconds_after_initialized;
  /// Lets pods override scaling factors and estimation windows with annotations.
  bool allow_customize_estimation = false;
  std::optional<LoadAwareSchedulingAggregatedArgs> aggregated;
  /// Resources beyond those the other fields name that node annotations may threshold.
  std::vector<std::string> supported_resources;
};

inline constexpr std::string_view kArgsKind = "LoadAwareSchedulingArgs";

/// Decodes, defaults and validates. `args` null: the defaults. Unknown fields, wrong types and
/// out-of-range values are errors naming the field ("aggregated.usageAggregationType: ...").
kube::Expected<LoadAwareSchedulingArgs> decodeLoadAwareSchedulingArgs(
    const boost::json::value* args, std::string_view api_version);

/// Koordinator's SetDefaults_LoadAwareSchedulingArgs on args whose maps hold only what the
/// configuration gave: weights when neither weights nor a dominant weight were given,
/// thresholds when none were, the cpu/memory scaling factors where missing.
void applyDefaults(LoadAwareSchedulingArgs& args);

/// Koordinator's ValidateLoadAwareSchedulingArgs; every problem is reported, "; "-joined.
kube::Expected<void> validateLoadAwareSchedulingArgs(const LoadAwareSchedulingArgs& args);

/// cpu, memory and every resource any field names, in the order vectors use.
ResourceVectorizer vectorizerFor(const LoadAwareSchedulingArgs& args);

}  // namespace koord::roles::scheduler::loadaware
