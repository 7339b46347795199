// Koordinator's NodeNUMAResource plugin: binds LSE/LSR pods to CPUs of their own and aligns pods
// to NUMA nodes as nodes and pods ask, writing the result into the pod's resource-status.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>

#include "framework/assigned_pod_listener.h"
#include "framework/framework_handle.h"
#include "framework/node_listener.h"
#include "framework/numa_topology_hint.h"
#include "framework/plugin.h"
#include "framework/reservation_listener.h"
#include "koord/apis/node_resource_topology.h"
#include "plugins/nodenumaresource/args.h"
#include "plugins/nodenumaresource/register.h"
#include "plugins/nodenumaresource/scoring.h"
#include "plugins/nodenumaresource/topology_cache.h"

namespace koord::roles::scheduler::nodenumaresource {

/// Gauge{node}: the CPUs pods are bound to on each node, as the plugin counts them (bound pods'
/// resource-status and the pods it reserved). Koordinator exports no such series.
inline constexpr std::string_view kAllocatedCpusMetric = "scheduler_numa_allocated_cpus";

/// Koordinator's refusals on a node whose cpu is amplified (resource-amplification-ratio).
inline constexpr std::string_view kErrInvalidCPUAmplificationRatio =
    "node(s) invalid CPU amplification ratio";
inline constexpr std::string_view kErrInsufficientAmplifiedCPU = "Insufficient amplified cpu";

class NodeNUMAResource final : public PreFilterPlugin,
                               public FilterPlugin,
                               public ScorePlugin,
                               public ReservePlugin,
                               public NUMATopologyHintProvider,
                               public AssignedPodListener,
                               public ReservationListener,
                               public NodeListener {
 public:
  NodeNUMAResource(std::shared_ptr<const NodeNUMAResourceArgs> args, FrameworkHandle& handle);

  std::string_view name() const override { return kPluginName; }
  const NodeNUMAResourceArgs& args() const { return *args_; }
  TopologyCache& cache() { return cache_; }
  const TopologyCache& cache() const { return cache_; }

  /// Reads the pod's resource-spec and numa-topology-spec and settles its CPU binding. Answers
  /// Skip (Filter left out) for a pod requesting nothing, and for a pod that asks for neither CPUs
  /// of its own nor a NUMA policy while no node's labels or NodeResourceTopology ask for binding or
  /// a NUMA policy.
  Status preFilter(CycleState& state, const PodInfo& pod) override;
  /// The bind-policy checks, enough bindable CPUs, and with a NUMA policy the topology manager
  /// over every hint provider of the profile (this plugin included).
  Status filter(const CycleState& state, const PodInfo& pod, const NodeInfo& node) const override;
  /// scoringStrategy over the node (or over the NUMA nodes the pod would be placed on).
  Status score(const CycleState& state, const PodInfo& pod, const NodeInfo& node,
               std::int64_t& score) const override;
  /// Chooses the CPUs and NUMA resources within the stored affinity, counts them at once and
  /// writes resource-status (and the resolved resource-spec) into the cycle's pod changes.
  Status reserve(CycleState& state, const PodInfo& pod, const std::string& node) override;
  void unreserve(CycleState& state, const PodInfo& pod, const std::string& node) override;

  NUMAProviderHints podTopologyHints(const CycleState& state, const PodInfo& pod,
                                     const NodeInfo& node) const override;
  Status allocate(const CycleState& state, const NUMATopologyHint& affinity, const PodInfo& pod,
                  const NodeInfo& node) const override;

  /// Bound pods' resource-status counts as held; finished and deleted pods release theirs.
  void onAssignedPodAdd(const PodInfo& pod) override;
  void onAssignedPodUpdate(const PodInfo& old_pod, const PodInfo& pod) override;
  void onAssignedPodDelete(const PodInfo& pod) override;
  /// An Available reservation's resource-status counts as held under its UID (what its owner
  /// pods take first); a finished or deleted one releases it.
  void onReservationAvailable(std::shared_ptr<const ReservationState> r) override;
  void onReservationGone(const std::string& uid) override;
  void onNodeAdd(const Node& node) override;
  void onNodeUpdate(const Node& old_node, const Node& node) override;
  void onNodeDelete(const Node& node) override;

  /// A NodeResourceTopology added or changed (null `old`: added); requeues the unschedulable
  /// pods when what the plugin reads of it changed.
  void onTopology(const apis::NodeResourceTopology* old, const apis::NodeResourceTopology& nrt);
  void onTopologyDelete(const apis::NodeResourceTopology& nrt);

 private:
  void trackPod(const PodInfo* old_pod, const PodInfo& pod);
  /// The profile's hint providers; this plugin alone where the handle lists none (table tests).
  std::span<NUMATopologyHintProvider* const> hintProviders() const;

  std::shared_ptr<const NodeNUMAResourceArgs> args_;
  FrameworkHandle& handle_;
  ResourceAllocationScorer scorer_;
  ResourceAllocationScorer numa_scorer_;
  NumaAllocateStrategy default_numa_strategy_;
  TopologyCache cache_;
  NUMATopologyHintProvider* self_[1];
  /// Where the reservations whose CPUs are recorded are.
  ReservationNodes reservation_nodes_;
};

}  // namespace koord::roles::scheduler::nodenumaresource
