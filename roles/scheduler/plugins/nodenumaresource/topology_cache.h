// NodeNUMAResource's per-node state: what each node's NodeResourceTopology and Node say about
// its CPUs and NUMA zones, and the CPUs and NUMA resources pods hold there, one lock per node.
#pragma once

#include <array>
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "framework/node_info.h"
#include "framework/node_slot.h"
#include "koord/apis/node_resource_topology.h"
#include "koord/core/expected.h"
#include "plugins/nodenumaresource/cpu_set.h"
#include "plugins/nodenumaresource/cpu_topology.h"
#include "plugins/nodenumaresource/node_allocation.h"
#include "plugins/nodenumaresource/node_summary.h"
#include "plugins/nodenumaresource/numa_policy.h"
#include "plugins/nodenumaresource/numa_resources.h"

namespace koord::metrics {
template <typename T>
class Family;
class Gauge;
}  // namespace koord::metrics

namespace koord::roles::scheduler::nodenumaresource {

/// Why a node's CPUs or NUMA zones cannot be used: a binding or NUMA-aligned pod is refused
/// there with this and the detail.
inline constexpr std::string_view kErrInvalidNodeTopology = "node(s) invalid NodeResourceTopology";
inline constexpr std::string_view kErrMissingNumaResources = "node(s) missing NUMA resources";

/// Koordinator's TopologyOptions, derived once per version of a NodeResourceTopology.
struct TopologyOptions {
  NodeCpuTopology topology;
  /// CPUs no pod may be bound to: the kubelet's reservedCPUs, the CPUs its static policy gave
  /// pods (pod-cpu-allocs with managedByKubelet), the node reservation's reservedCPUs and an
  /// exclusive system-QoS cpuset, all as the NodeResourceTopology's annotations carry them.
  CpuSet reserved_cpus;
  /// How many pods may share one CPU (Koordinator's default, 1).
  int max_ref_count = 1;
  /// The kubelet runs the static CPU manager policy with full-pcpus-only=true.
  bool kubelet_full_pcpus_only = false;
  /// The kubelet's topology manager policy (topologyPolicies: BestEffort, Restricted or
  /// SingleNUMANodePodLevel; anything else is None).
  NumaTopologyPolicy numa_policy = NumaTopologyPolicy::kNone;
  /// The "node-N" zones' allocatable cpu, memory and hugepages, ascending by node.
  std::vector<NumaNodeResources> zones;
  /// What could not be read, "; "-joined; empty when everything could.
  std::string error;
};

/// Koordinator's NewTopologyOptions. Koordinator logs what it cannot read and goes on with the
/// rest empty; here the same rest is kept, and `error` says what was wrong so that pods which
/// need the node's CPUs or zones are refused rather than bound on a guess. Never throws.
TopologyOptions buildTopologyOptions(const apis::NodeResourceTopology& nrt);

/// One node's state as the plugin reads it (under the node's lock).
struct NodeTopologyState {
  /// Null until the node's NodeResourceTopology arrives.
  std::shared_ptr<const TopologyOptions> options;
  /// options' reserved CPUs plus the Node's own node.koordinator.sh/reservation reservedCPUs.
  CpuSet reserved_cpus;
  /// options' error and the Node annotation's, "; "-joined; empty when both read.
  std::string error;
  /// The Node's cpu ratio in node.koordinator.sh/resource-amplification-ratio; 1 without one.
  double cpu_amplification_ratio = 1;
  /// Why that annotation could not be read; empty when it could.
  std::string amplification_error;
  // Filter reads the members above and the start of this one on every node: kept together.
  NodeAllocation allocation;

  const NodeCpuTopology& topology() const;
  /// The NUMA zones' resources, their cpu amplified by the node's ratio.
  std::span<const NumaNodeResources> zones() const;
  /// Amplified, or an amplification that could not be read: pods requesting cpu are checked
  /// against the amplified room (Koordinator's filterAmplifiedCPUs).
  bool amplified() const { return cpu_amplification_ratio > 1 || !amplification_error.empty(); }

 private:
  friend class TopologyCache;
  /// What pods hold, kept to rebuild `allocation` when the topology changes.
  std::map<std::string, PodAllocation, std::less<>> pods;
  CpuSet node_reserved_cpus;
  std::string node_reservation_value;
  std::string node_error;
  std::string node_amplification_value;
  /// options' zones with cpu amplified; empty without amplification.
  std::vector<NumaNodeResources> amplified_zones;
  /// What the Node's labels say (setNode): its cpu-bind-policy (the kubelet's full-pcpus-only
  /// aside), its numa-topology-policy when set and whether that was readable.
  bool node_seen = false;
  NodeCpuBindPolicy label_bind = NodeCpuBindPolicy::kNone;
  std::optional<NumaTopologyPolicy> label_numa_policy;
  bool label_numa_invalid = false;
  /// The Node's labels ask for CPU binding or a NUMA policy; the NRT does.
  bool labels_need_topology = false;
  bool options_need_topology = false;
  bool counted = false;
  bool counted_policy = false;
  bool counted_amplified = false;
  /// The node's allocated-CPUs series, found once: Reserve sets it without the family's lookup.
  metrics::Gauge* allocated_gauge = nullptr;
};

/// Thread-safe: entries by node slot (found without a lock), and one lock per node, held for the
/// whole of each call (Filter's readers on many threads, the informers' and Reserve's writers).
class TopologyCache {
 public:
  TopologyCache() = default;
  TopologyCache(const TopologyCache&) = delete;
  TopologyCache& operator=(const TopologyCache&) = delete;

  /// Where the CPUs pods hold on each node are published (label "node"); null for none.
  void setAllocatedCpusGauge(metrics::Family<metrics::Gauge>* gauge) { gauge_ = gauge; }

  /// The node's NodeResourceTopology, derived (null: deleted). The recorded pods are counted
  /// again against the new CPU topology.
  void setTopology(std::string_view node, std::shared_ptr<const TopologyOptions> options);
  /// The Node as the informer has it: its labels' bind and NUMA policies, and its reservation's
  /// reservedCPUs.
  void setNode(const Node& node);
  /// The Node is gone: what pods held there is forgotten (as Koordinator's resource manager),
  /// the NodeResourceTopology's options are kept.
  void removeNode(std::string_view node);

  /// Records (or replaces, by uid) what a pod holds on a node.
  void recordPod(std::string_view node, PodAllocation pod);
  /// Forgets what the pod held there; false when nothing was recorded.
  bool releasePod(std::string_view node, std::string_view uid);
  /// Reserve's step: fn(const NodeTopologyState&) chooses (Expected<PodAllocation>) and its
  /// choice is recorded under the same hold of the node's lock, so no pod event comes between.
  template <typename Fn>
  Expected<PodAllocation> allocateAndRecord(std::string_view node, Fn&& fn) {
    Expected<PodAllocation> out = invalidArgument("not allocated");
    write(node, [&](NodeTopologyState& s) {
      out = fn(static_cast<const NodeTopologyState&>(s));
      if (out)
        record(node, s, *out);
    });
    return out;
  }

  /// Nodes whose labels or NodeResourceTopology ask for CPU binding (cpu-bind-policy,
  /// full-pcpus-only) or name a NUMA topology policy, or whose cpu is amplified: with none, a pod
  /// that asks for neither has nothing to check anywhere.
  int nodesNeedingTopology() const { return needing_.load(std::memory_order_relaxed); }
  /// Nodes whose NodeResourceTopology names a NUMA topology policy: with none, a node's policy
  /// is its label's alone, so Score needs no lookup to know it.
  int nodesWithTopologyPolicy() const { return with_policy_.load(std::memory_order_relaxed); }
  /// Nodes whose cpu is amplified (or whose ratio is unreadable): with none, Score's plain
  /// node score needs no lookup.
  int nodesAmplified() const { return amplified_.load(std::memory_order_relaxed); }

  /// Calls fn(const NodeTopologyState&) with the node's lock held; an unknown node reads as the
  /// empty state. fn must not call back into the cache. By slot (NodeInfo::nodeSlot()) in a
  /// cycle; by name elsewhere.
  template <typename Fn>
  decltype(auto) read(std::uint32_t slot, Fn&& fn) const {
    const Entry* e = entries_.find(slot);
    if (e == nullptr)
      return fn(static_cast<const NodeTopologyState&>(kEmpty));
    std::lock_guard lock(e->mu);
    return fn(static_cast<const NodeTopologyState&>(e->state));
  }
  template <typename Fn>
  decltype(auto) read(std::string_view node, Fn&& fn) const {
    return read(nodeSlotOf(node), std::forward<Fn>(fn));
  }
  /// The node's summary as of its last change, without its lock; not usable for an unknown
  /// node or one whose state the word cannot tell (see NodeSummary).
  NodeSummary summary(std::uint32_t slot) const {
    const std::atomic<std::uint64_t>* word = summaries_.find(slot);
    return word == nullptr ? NodeSummary{}
                           : NodeSummary::unpack(word->load(std::memory_order_acquire));
  }

 private:
  struct Entry {
    mutable std::mutex mu;
    NodeTopologyState state;
  };
  static const NodeTopologyState kEmpty;

  /// fn(NodeTopologyState&) under the node's lock, the entry created when missing (nothing is
  /// done for a name past the slot bound; nodeSlotOf logs it).
  template <typename Fn>
  void write(std::string_view node, Fn&& fn) {
    const std::uint32_t slot = nodeSlotOf(node);
    Entry* e = entries_.getOrCreate(slot);
    if (e == nullptr)
      return;
    std::lock_guard lock(e->mu);
    fn(e->state);
    storeSummary(slot, e->state);
  }
  /// Under the entry's lock, after every change of its state.
  void storeSummary(std::uint32_t slot, const NodeTopologyState& s);
  void record(std::string_view node, NodeTopologyState& s, PodAllocation pod);
  /// Under the entry's lock.
  void recount(NodeTopologyState& s);
  void rebuild(NodeTopologyState& s);
  void refreshDerived(NodeTopologyState& s);
  void publish(std::string_view node, NodeTopologyState& s) const;

  /// Entries are never freed: a deleted node's is emptied, so a reader's reference stays good.
  NodeSlotTable<Entry> entries_;
  /// NodeSummary::pack of each entry's state, kept apart from the entries so that a cycle's
  /// reads of neighbouring nodes share cache lines.
  NodeSlotArray<std::atomic<std::uint64_t>> summaries_;
  std::atomic<int> needing_{0};
  std::atomic<int> with_policy_{0};
  std::atomic<int> amplified_{0};
  metrics::Family<metrics::Gauge>* gauge_ = nullptr;
};

}  // namespace koord::roles::scheduler::nodenumaresource
