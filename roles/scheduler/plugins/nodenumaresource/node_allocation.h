// One node's NUMA and CPU bookkeeping: the CPUs and NUMA resources each pod holds, how many pods
// share each CPU, which NUMA nodes single-NUMA and multi-NUMA pods use, and what is left.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "plugins/nodenumaresource/cpu_accumulator.h"
#include "plugins/nodenumaresource/cpu_set.h"
#include "plugins/nodenumaresource/cpu_topology.h"
#include "plugins/nodenumaresource/numa_policy.h"
#include "plugins/nodenumaresource/numa_resources.h"

namespace koord::roles::scheduler::nodenumaresource {

/// What one pod (or reservation) holds on a node.
struct PodAllocation {
  std::string uid;
  std::string namespace_;
  std::string name;
  CpuSet cpus;
  CpuExclusivePolicy exclusive = CpuExclusivePolicy::kNone;
  /// Sorted by node, no node twice.
  std::vector<NumaNodeResources> numa_resources;

  friend bool operator==(const PodAllocation&, const PodAllocation&) = default;
};

/// Not thread-safe: the plugin keeps one per node behind its own lock and holds it for every
/// call (Filter and Score read, Reserve/Unreserve and the pod informer write).
class NodeAllocation {
 public:
  /// Records `pod`; a uid already recorded is left as it is (false). CPUs the topology does not
  /// have are counted but belong to no NUMA node.
  bool add(const NodeCpuTopology& topology, PodAllocation pod);
  /// Replaces what `pod.uid` holds.
  void update(const NodeCpuTopology& topology, PodAllocation pod);
  /// Forgets the uid; false when it was not recorded.
  bool release(std::string_view uid);

  const PodAllocation* find(std::string_view uid) const;
  std::size_t podCount() const { return pods_.size(); }

  /// By CPU id: how many pods hold each CPU and the exclusive policy of the last to take it.
  AllocatedCpus allocatedCpus() const { return cpus_; }
  /// The CPUs at least one pod holds.
  const CpuSet& allocatedCpuSet() const { return held_; }
  /// allocatedCpus() with one hold fewer on each of `preferred` (a reservation's CPUs that the
  /// pod may take over), as takeCpus should see them for that pod.
  std::vector<AllocatedCpu> allocatedCpusExcept(const CpuSet& preferred) const;

  /// Koordinator's getAvailableCPUs: the topology's CPUs less `reserved` and less the CPUs held
  /// max_ref_count times or more, `preferred` CPUs counting one hold fewer.
  CpuSet availableCpus(const NodeCpuTopology& topology, int max_ref_count, const CpuSet& reserved,
                       const CpuSet& preferred = {}) const;

  /// Idle when no bound pod uses the NUMA node, single when only pods within it alone do,
  /// shared otherwise.
  NumaNodeStatus numaNodeStatus(int node_id) const;
  /// numaNodeStatus of nodes 0..count-1 (Koordinator indexes the statuses by node id).
  std::vector<NumaNodeStatus> numaNodeStatuses(int count) const;

  /// The NUMA resources pods hold on a node; nullptr when none ever did.
  const NumaResources* allocatedOnNumaNode(int node_id) const;

  struct NumaAvailability {
    /// One entry per zone, in the zones' order: what is left.
    std::vector<NumaNodeResources> available;
    /// Only zones some pod holds resources on: what they hold.
    std::vector<NumaNodeResources> allocated;
  };
  /// Koordinator's getAvailableNUMANodeResources over the node's zones (their resources
  /// already amplified). With a cpu amplification ratio above 1 the CPUs pods are bound to
  /// count amplified in what a zone holds; `reusable` (a reservation's, per NUMA node) is taken
  /// back from what is held.
  NumaAvailability numaAvailability(const NodeCpuTopology& topology,
                                    std::span<const NumaNodeResources> zones,
                                    double cpu_amplification_ratio,
                                    std::span<const NumaNodeResources> reusable = {}) const;

 private:
  struct Entry {
    PodAllocation pod;
    NumaMask numa_nodes = 0;  // the NUMA nodes of its CPUs
  };
  NumaResources* allocatedOn(int node_id);

  std::map<std::string, Entry, std::less<>> pods_;
  std::vector<AllocatedCpu> cpus_;
  CpuSet held_;
  std::vector<NumaNodeResources> numa_allocated_;  // sorted by node
  std::array<std::uint32_t, kMaxNumaNodeId + 1> single_{};
  std::array<std::uint32_t, kMaxNumaNodeId + 1> shared_{};
};

}  // namespace koord::roles::scheduler::nodenumaresource
