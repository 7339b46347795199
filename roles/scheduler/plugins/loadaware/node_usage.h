// A node's load as LoadAwareScheduling counts it: NodeMetric usage plus estimates of pods it may
// not cover yet, built once per (NodeMetric, assigned pods) pair for every Filter and Score.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <utility>

#include "koord/apis/node_metric.h"
#include "koord/core/string_map.h"
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

/// Remembers the last state per node with the inputs it came from (kept alive, so a pointer
/// match means the same inputs). Thread-safe.
class NodeUsageMemo {
 public:
  std::shared_ptr<const NodeUsageState> get(const std::string& node,
                                            std::shared_ptr<const apis::NodeMetric> metric,
                                            std::shared_ptr<const AssignedPods> pods,
                                            const ResourceVectorizer& vectorizer,
                                            bool prod_usage_include_sys);
  /// Forgets everything once more than `max_nodes` are remembered: deleted nodes would stay
  /// otherwise, and a cluster's worth of states is rebuilt within one cycle.
  void trim(std::size_t max_nodes);

 private:
  struct Entry {
    std::shared_ptr<const apis::NodeMetric> metric;
    std::shared_ptr<const AssignedPods> pods;
    std::shared_ptr<const NodeUsageState> state;
  };
  std::shared_mutex mu_;
  StringMap<Entry> entries_;
};

}  // namespace koord::roles::scheduler::loadaware
