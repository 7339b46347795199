// One pod's scheduling algorithm over a snapshot (kube-scheduler's genericScheduler.Schedule):
// PreFilter, Filter over enough nodes, PreScore, Score, and the pick among the best.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <variant>

#include "framework/plugin.h"

namespace koord::roles::scheduler {

class Extenders;
class Framework;
class Snapshot;

/// kube-scheduler's numFeasibleNodesToFind: every node below 100 nodes or at 100 %; otherwise
/// `percentage` of them (0: adaptive, 50 % - 1 % per 125 nodes, at least 5 %), never below 100.
std::size_t numFeasibleNodesToFind(std::size_t all_nodes, std::int32_t percentage);

struct ScheduleResult {
  std::string node;
  std::size_t evaluated_nodes = 0;
  std::size_t feasible_nodes = 0;
};

/// No node fits: each failed node's status, for FailedScheduling and for PostFilter.
struct FitError {
  std::size_t num_all_nodes = 0;
  /// Set when PreFilter refused the pod (then no node was filtered).
  Status pre_filter;
  NodeStatusMap statuses;
  /// "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) didn't match node selector."
  std::string message() const;
  /// The plugins that refused the pod, sorted (kube-scheduler's Diagnosis.UnschedulablePlugins):
  /// the PreFilter plugin, else each plugin a node's Filter status names.
  std::vector<std::string> unschedulablePlugins() const;
};

using ScheduleOutcome = std::variant<ScheduleResult, FitError, Status /* kError */>;

class PodScheduler {
 public:
  PodScheduler(Framework& framework, std::int32_t percentage_of_nodes_to_score,
               std::uint64_t seed = std::random_device{}());

  /// Runs the algorithm for `pod` on `snapshot` (which the framework sees for the cycle).
  ScheduleOutcome schedule(CycleState& state, const PodInfo& pod, const Snapshot& snapshot);

  /// The scheduler extenders (null: none, the default): they filter after the Filter plugins
  /// (a required one's failure is the cycle's error) and add their weighted scores to the
  /// plugins' totals. They must outlive this.
  void setExtenders(Extenders* extenders) { extenders_ = extenders; }

 private:
  Framework& framework_;
  Extenders* extenders_ = nullptr;
  std::int32_t percentage_;
  /// Where the next filter pass starts, so successive pods spread over all nodes.
  std::size_t next_start_ = 0;
  std::mt19937_64 rng_;
};

}  // namespace koord::roles::scheduler
