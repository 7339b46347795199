// `koord top pods`: each pod's koord QoS and priority class, what it requests (batch and mid
// resources counted as cpu and memory) against what its node's koordlet reports it uses.
#pragma once

#include <boost/json/value.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "snapshot/cluster_snapshot.h"

namespace koord::roles::cli {

struct PodTopRow {
  std::string namespace_;
  std::string name;
  std::string node_name;
  std::string phase;
  std::string qos;       // "LS", "BE", ... ("" when none applies)
  std::string priority;  // "koord-prod", ... ("" when none applies)
  /// cpu (plus batch-cpu and mid-cpu, which count milli-cores) and memory (plus batch-memory
  /// and mid-memory), summed as the scheduler sums a pod's request.
  std::int64_t cpu_request_milli = 0;
  std::int64_t memory_request = 0;
  /// From the node's NodeMetric podsMetric; nullopt when it reports none for the pod.
  std::optional<std::int64_t> cpu_used_milli;
  std::optional<std::int64_t> memory_used;
  std::string problem;
};

struct PodTopOptions {
  /// Only this namespace; "" for all.
  std::string namespace_;
  /// Only pods bound to this node; "" for all.
  std::string node;
};

/// Rows by namespace and name; unscheduled and finished pods included.
std::vector<PodTopRow> topPods(const ClusterSnapshot& snapshot, const PodTopOptions& options);

/// NAMESPACE is left out when `one_namespace` (as kubectl does without -A).
std::string podTopTable(const std::vector<PodTopRow>& rows, bool one_namespace);
boost::json::value podTopJson(const ClusterSnapshot& snapshot, const std::vector<PodTopRow>& rows);

}  // namespace koord::roles::cli
