// `koord top nodes`: each node's co-location state in one row, from a ClusterSnapshot: what the
// node offers, what LS and BE pods use (NodeMetric), the batch and mid resources the manager
// wrote, how much CPU the koordlet's suppression leaves BE, its evictions and reservations.
#pragma once

#include <boost/json/value.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "snapshot/cluster_snapshot.h"

namespace koord::roles::cli {

struct NodeTopRow {
  std::string name;
  std::int64_t cpu_allocatable_milli = 0;
  std::int64_t memory_allocatable = 0;
  /// From the node's NodeMetric; nullopt without one (no koordlet, or not reported yet).
  std::optional<std::chrono::seconds> metric_age;
  std::int64_t node_cpu_used_milli = 0;
  std::int64_t node_memory_used = 0;
  /// podsMetric summed by class: BE is the BE QoS or the batch and free priorities.
  std::int64_t ls_cpu_used_milli = 0;
  std::int64_t ls_memory_used = 0;
  std::int64_t be_cpu_used_milli = 0;
  std::int64_t be_memory_used = 0;
  /// Running or pending pods bound to the node, by the same classes.
  int ls_pods = 0;
  int be_pods = 0;
  /// kubernetes.io/batch-cpu (milli-cores) and batch-memory, mid-cpu and mid-memory in
  /// status.allocatable; nullopt when the manager has not written them.
  std::optional<std::int64_t> batch_cpu_milli;
  std::optional<std::int64_t> batch_memory;
  std::optional<std::int64_t> mid_cpu_milli;
  std::optional<std::int64_t> mid_memory;
  /// What BE pods may use by the NodeSLO's CPU suppression (the koordlet's formula over the
  /// reported usage): nullopt when suppression is off, there is no NodeSLO or no NodeMetric.
  std::optional<std::int64_t> be_cpu_limit_milli;
  /// "cpuset" or "cfsQuota" when suppression is on.
  std::string suppress_policy;
  /// The koordlet's evictPodSuccess Events reported from this node.
  int evictions = 0;
  /// Available Reservations placed on the node.
  int reservations = 0;
  /// Objects of this node that could not be read, one line each ("NodeMetric: ...").
  std::vector<std::string> problems;
};

/// One row per Node, by name.
std::vector<NodeTopRow> topNodes(const ClusterSnapshot& snapshot);

/// The rows as kubectl prints a table.
std::string nodeTopTable(const std::vector<NodeTopRow>& rows);
/// {"takenAt", "nodes": [...]} with every figure in milli-cores or bytes.
boost::json::value nodeTopJson(const ClusterSnapshot& snapshot,
                               const std::vector<NodeTopRow>& rows);

}  // namespace koord::roles::cli
