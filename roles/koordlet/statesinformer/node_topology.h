// The node's NodeResourceTopology as the koordlet computes it (NUMA zones from sysfs, Koordinator's
// CPU annotations), how it differs from the object the API server holds, and the writes.
#pragma once

#include <boost/json/fwd.hpp>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "koord/apis/node_resource_topology.h"
#include "koord/cgroup/cpu_topology.h"
#include "koord/kube/error.h"
#include "koord/kube/labels.h"
#include "statesinformer/node_info.h"
#include "statesinformer/pod_meta.h"

namespace koord::roles::koordlet {

/// Linux's MAX_NUMNODES: more node directories than this are not a NUMA layout.
inline constexpr std::size_t kMaxNumaNodes = 1024;
/// The kubelet's cpu_manager_state holds a CPU list per container; a few hundred pods at most.
inline constexpr std::size_t kMaxCPUManagerStateBytes = 4 * 1024 * 1024;

/// One NUMA node's memory, in bytes.
struct NumaMemory {
  int node_id = 0;
  std::int64_t mem_total = 0;
  std::int64_t hugepages_2mi = 0;
  std::int64_t hugepages_1gi = 0;
  friend bool operator==(const NumaMemory&, const NumaMemory&) = default;
};

/// The file's text; nullopt when it does not exist; an error naming it when it cannot be read or
/// is longer than `limit` (sysfs and proc files, the kubelet's CPU manager checkpoint).
kube::Expected<std::optional<std::string>> readFileBounded(const std::filesystem::path& path,
                                                           std::size_t limit);

/// MemTotal of `<sys_root>/devices/system/node/node<N>/meminfo` for each node directory, by N;
/// with `hugepages` (the HugePageReport gate) also the 2 MiB and 1 GiB pages of
/// node<N>/hugepages/hugepages-{2048,1048576}kB/nr_hugepages (absent: none). Empty without the
/// node directory (a kernel built without NUMA). Errors name the file: a node without a
/// readable meminfo or MemTotal, an unreadable nr_hugepages, more than kMaxNumaNodes nodes.
kube::Expected<std::vector<NumaMemory>> readNumaMemory(const std::filesystem::path& sys_root,
                                                       bool hugepages);

/// Koordinator's cpu-basic-info: the first "model name" and "vendor_id" of
/// `<proc_root>/cpuinfo` ("unknown" when absent), SMT from
/// `<sys_root>/devices/system/cpu/smt/active` (without it: whether some core has two threads in
/// `topology`), turbo from `<sys_root>/devices/system/cpu/intel_pstate/no_turbo` (false without
/// it), the L3 CAT mask from `<sys_fs_root>/resctrl/info/L3/cbm_mask` ("" without it).
apis::CPUBasicInfo readCPUBasicInfo(const std::filesystem::path& proc_root,
                                    const std::filesystem::path& sys_root,
                                    const std::filesystem::path& sys_fs_root,
                                    const cgroup::CpuTopology& topology);

/// `count` CPUs of `available` chosen as the kubelet's static CPU manager reserves them
/// (takeByTopologyNUMAPacked with sockets above NUMA nodes): whole sockets, then whole NUMA
/// nodes, then whole cores, then single threads, each level's candidates ordered by how few
/// available CPUs they hold, then by id. A core is (socket, core_id). Sorted; empty when
/// `available` holds fewer than `count` CPUs of the topology, or `count` is not positive.
std::vector<int> takeByTopology(const cgroup::CpuTopology& topology, std::span<const int> available,
                                int count);

/// The NRT topologyPolicies value for the kubelet's --topology-manager-policy and -scope
/// ("single-numa-node" with "pod" is SingleNUMANodePodLevel); None for anything else.
std::string_view topologyPolicyOf(std::string_view kubelet_policy, std::string_view kubelet_scope);

/// The pods whose CPUs the kubelet's static CPU manager assigned (its cpu_manager_state
/// checkpoint, {"entries":{"<pod uid>":{"<container>":"<cpus>"}}}), sorted by uid, with
/// managedByKubelet set and the pod's namespace and name when `pods` has it. Pods koord manages
/// are left out: a koord QoS of LS or BE, or a cpuset in resource-status. Errors: text that is
/// not such a checkpoint or longer than kMaxCPUManagerStateBytes; a container's unreadable CPU
/// list is skipped and said in `warnings`.
kube::Expected<std::vector<apis::PodCPUAlloc>> kubeletPodCPUAllocs(
    std::string_view cpu_manager_state, std::span<const PodMeta> pods,
    std::vector<std::string>& warnings);

struct NodeTopologyInputs {
  const cgroup::CpuTopology& topology;
  std::span<const NumaMemory> numa;
  const apis::CPUBasicInfo& cpu_basic_info;
  /// Its annotations: node.koordinator.sh/reservation, system-qos-resource.
  const NodeInfo& node;
  std::span<const PodMeta> pods;
  /// The kubelet's CPU manager, from its /configz (the empty policy is what Koordinator reports
  /// with -disable-query-kubelet-config). reserved_cpus stays in the shared pools, as in
  /// Koordinator.
  apis::KubeletCPUManagerPolicy kubelet_policy{};
  std::string_view topology_policy = apis::kTopologyPolicyNone;
  /// The checkpoint text, read for a static policy only.
  std::optional<std::string> cpu_manager_state{};
};

/// What the koordlet owns of the object: Koordinator's nodeTopologyStatus.
struct NodeTopologyStatus {
  std::vector<std::string> topology_policies;
  /// A "node-N" zone per NUMA node, by name, each with cpu, memory, hugepages-1Gi and
  /// hugepages-2Mi (capacity = allocatable = available).
  std::vector<apis::Zone> zones;
  /// cpu-basic-info, cpu-topology, cpu-shared-pools, be-cpu-shared-pools, pod-cpu-allocs,
  /// kubelet cpu-manager-policy, node.koordinator.sh/reservation and system-qos-resource.
  kube::Labels annotations;
  friend bool operator==(const NodeTopologyStatus&, const NodeTopologyStatus&) = default;
};

struct NodeTopologyReport {
  NodeTopologyStatus status;
  /// Inputs left out and why ("pod ns/name: scheduling.koordinator.sh/resource-status: ..."),
  /// for the caller to log.
  std::vector<std::string> warnings;
};

/// The status as Koordinator's koordlet computes it. Shared pools: per NUMA node (its socket the
/// socket of its first CPU), ordered by (socket, node), all CPUs but those of LSE and LSR pods'
/// resource-status cpusets (only those pods are bound to CPUs, as the cpuset hook holds) and of
/// the kubelet-managed pods; the BE pools keep LSR pods' CPUs. Then both lose the node
/// reservation's CPUs (reservedCPUs, else resources.cpu taken by takeByTopology) and the
/// exclusive system QoS cpuset; a pool left without CPUs stays, with no cpuset.
NodeTopologyReport buildNodeTopology(const NodeTopologyInputs& in);

/// Why the object the API server holds needs a write (Koordinator's isChanged), "" when it does
/// not: no annotations at all, other topologyPolicies, one of the status annotations added,
/// dropped or different as JSON, other zones by count, name or type, or another cpu or memory
/// allocatable. Other zone resources and other annotations are others' to change.
std::string nodeTopologyDifference(const apis::NodeResourceTopology& current,
                                   const NodeTopologyStatus& desired);

/// The zones to write over `current`'s: current's zones the status names, their resources
/// overridden by the status's, and the status's other zones, by name (Koordinator's
/// MergeZoneList over TrimDifferentZone; zones are rebuilt with type Node and every quantity the
/// allocatable).
std::vector<apis::Zone> mergedZones(std::span<const apis::Zone> current,
                                    std::span<const apis::Zone> desired);

/// A JSON merge patch writing `desired` over `current`: the status annotations, the
/// topologyPolicies and mergedZones, with current's resourceVersion so that a write over a
/// newer object fails with a conflict.
boost::json::value nodeTopologyPatch(const apis::NodeResourceTopology& current,
                                     const NodeTopologyStatus& desired);

/// The object to create: named after the node, labelled managed-by Koordinator, owned by the
/// Node (controller, blockOwnerDeletion) so that it goes with it.
boost::json::value nodeTopologyObject(const NodeTopologyStatus& desired, std::string_view node_name,
                                      std::string_view node_uid);

}  // namespace koord::roles::koordlet
