// A node's load as LoadAwareScheduling counts it: NodeMetric usage plus estimates of pods it may
// not cover yet, built once per (NodeMetric, assigned pods) pair (node_view.h keeps the result).
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "koord/apis/node_metric.h"
#include "plugins/loadaware/pod_assign_cache.h"
#include "plugins/loadaware/resource_vector.h"

namespace koord::roles::scheduler::loadaware {

/// The koordlet's default when spec.metricCollectPolicy.reportIntervalSeconds is unset.
inline constexpr std::chrono::seconds kDefaultNodeMetricReportInterval{60};

struct NodeUsageState {
  /// status.nodeMetric.nodeUsage; nullopt when status.nodeMetric is absent.
  std::optional<ResourceVector> node_usage;
  /// aggregatedNodeUsages by (type, duration); duration 0 holds the longest one reported.
  std::map<std::pair<std::string, std::chrono::nanoseconds>, ResourceVector, std::less<>>
      aggregated;
  /// Reported usage of the assigned pods that are prod both by their own labels and in the
  /// report (plus system usage with prodUsageIncludeSys).
  ResourceVector prod_usage;
  /// What estimates add on top of the usage: sum of max(0, estimate - reported usage) over the
  /// pods the report may not cover yet; the prod variant over prod pods.
  ResourceVector node_delta;
  ResourceVector prod_delta;
  /// Every assigned pod's full estimate (used when the usage to start from is missing).
  ResourceVector node_estimated;
};

NodeUsageState buildNodeUsageState(const apis::NodeMetric& metric, const AssignedPods* pods,
                                   const ResourceVectorizer& vectorizer,
                                   bool prod_usage_include_sys);

/// The existing load the incoming pod's estimate is added to. `aggregation_type` empty: the
/// plain node usage. An aggregated usage the report lacks falls back to the node usage when
/// `aggregated_duration` is 0, else to the pods' full estimates.
ResourceVector estimatedOfExisting(const NodeUsageState& state,
                                   const ResourceVectorizer& vectorizer, bool prod_pod,
                                   std::chrono::nanoseconds aggregated_duration,
                                   std::string_view aggregation_type);

}  // namespace koord::roles::scheduler::loadaware
