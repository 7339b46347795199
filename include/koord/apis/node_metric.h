// The slo.koordinator.sh/v1alpha1 NodeMetric fields koord's roles read (usage the koordlet reports
// per node, pod and host application), projected once from the API server's JSON.
#pragma once

#include <boost/json/fwd.hpp>

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "koord/apis/extension.h"
#include "koord/kube/error.h"
#include "koord/kube/quantity.h"

namespace koord::apis {

/// One aggregatedNodeUsages / aggregatedSystemUsages entry: usage per aggregation type ("avg",
/// "p50", "p90", "p95", "p99"; other keys are kept as written) over `duration`.
struct AggregatedUsage {
  std::map<std::string, kube::ResourceList, std::less<>> usage;
  std::chrono::nanoseconds duration{0};
};

/// status.nodeMetric. The ResourceMap wrapper ({"resources": {...}, "devices": [...]}) is
/// flattened to its resources; devices are not read by any role yet.
struct NodeMetricInfo {
  kube::ResourceList node_usage;
  std::vector<AggregatedUsage> aggregated_node_usages;
  kube::ResourceList system_usage;
  std::vector<AggregatedUsage> aggregated_system_usages;
};

/// status.podsMetric[]. Priority and QoS are the strings the koordlet wrote, read by name; an
/// unknown or empty one is kNone.
struct PodMetricInfo {
  std::string namespace_;
  std::string name;
  kube::ResourceList pod_usage;
  PriorityClass priority = PriorityClass::kNone;
  QoSClass qos = QoSClass::kNone;
};

/// status.hostApplicationMetric[].
struct HostApplicationMetricInfo {
  std::string name;
  kube::ResourceList usage;
  PriorityClass priority = PriorityClass::kNone;
  QoSClass qos = QoSClass::kNone;
};

/// spec.metricCollectPolicy; every field optional as in the CRD (unset means the koordlet's
/// default).
struct NodeMetricCollectPolicy {
  std::optional<std::int64_t> aggregate_duration_seconds;
  std::optional<std::int64_t> report_interval_seconds;
  /// nodeAggregatePolicy.durations; nullopt when nodeAggregatePolicy is absent.
  std::optional<std::vector<std::chrono::nanoseconds>> node_aggregate_durations;
  /// "usageWithoutPageCache", "usageWithHotPageCache", "usageWithPageCache" (not validated: the
  /// API server's enum check already did, and a newer koordlet may know more).
  std::optional<std::string> node_memory_collect_policy;
};

struct NodeMetric {
  /// metadata.name, which is the node's name.
  std::string name;
  std::optional<NodeMetricCollectPolicy> collect_policy;
  /// status.updateTime; nullopt when the koordlet has not reported yet.
  std::optional<std::chrono::system_clock::time_point> update_time;
  /// status.nodeMetric; nullopt when absent.
  std::optional<NodeMetricInfo> node_metric;
  /// status.podsMetric in order; null entries (Go decodes them as nil pointers) are skipped.
  std::vector<PodMetricInfo> pods_metric;
  std::vector<HostApplicationMetricInfo> host_application_metric;
  /// status.prodReclaimableMetric.resource.resources; nullopt when absent or null (an empty
  /// map is present: the koordlet predicted nothing reclaimable).
  std::optional<kube::ResourceList> prod_reclaimable;
};

/// Projects a NodeMetric object. Unknown fields are ignored and JSON null reads as absent; a field
/// of the wrong type, a bad quantity, time or duration is an error naming it
/// ("status.podsMetric[2].podUsage.resources[cpu]: ...").
kube::Expected<NodeMetric> decodeNodeMetric(const boost::json::value& v);

}  // namespace koord::apis
