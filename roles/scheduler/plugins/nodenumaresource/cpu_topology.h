// The scheduler's view of a node's CPUs (sockets, NUMA nodes, physical cores, logical CPUs) as
// the NodeResourceTopology reports them, indexed once so binding and hints never search.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "koord/cgroup/cpu_topology.h"
#include "koord/core/expected.h"
#include "plugins/nodenumaresource/cpu_set.h"

namespace koord::roles::scheduler::nodenumaresource {

/// NUMA node ids are bits of a 64-bit mask (Koordinator's and the kubelet's bitmask).
inline constexpr int kMaxNumaNodeId = 63;
/// Socket ids beyond this are refused: a package id is small on every machine, and a large
/// one is a broken report.
inline constexpr int kMaxSocketId = 4095;

/// Bits of NUMA node ids.
using NumaMask = std::uint64_t;
inline NumaMask numaBit(int node_id) {
  return NumaMask{1} << node_id;
}

/// One logical CPU with the dense indices binding uses.
struct CpuDetail {
  int cpu_id = 0;
  /// sysfs' core_id: unique only within its socket.
  int core_id = 0;
  int socket_id = 0;
  int node_id = 0;
  /// The physical core, 0..numCores()-1, in (socket_id, core_id) order: Koordinator's
  /// socket<<16|core key sorts the same way.
  int core = 0;
  /// 0..numSockets()-1 in socket id order.
  int socket = 0;
};

class NodeCpuTopology {
 public:
  /// An empty topology: valid() is false, every count zero.
  NodeCpuTopology() = default;

  /// From the reported CPUs, any order. Refused, saying which CPU: a CPU id outside
  /// [0, cgroup::kMaxCpuId] or given twice, a NUMA node outside [0, kMaxNumaNodeId], a socket
  /// outside [0, kMaxSocketId], a negative core id, a physical core whose CPUs sit on different
  /// NUMA nodes, and a NUMA node on two sockets. An empty list gives the empty topology.
  static Expected<NodeCpuTopology> build(std::span<const cgroup::CpuInfo> cpus);

  /// Koordinator's IsValid: at least one CPU.
  bool valid() const { return !details_.empty(); }
  int numCpus() const { return static_cast<int>(details_.size()); }
  int numCores() const { return static_cast<int>(core_offsets_.size()) - (valid() ? 1 : 0); }
  int numNodes() const { return static_cast<int>(node_ids_.size()); }
  int numSockets() const { return static_cast<int>(socket_ids_.size()); }
  /// Integer quotients, as Koordinator computes them; 0 on the empty topology.
  int cpusPerCore() const { return numCores() == 0 ? 0 : numCpus() / numCores(); }
  int cpusPerNode() const { return numNodes() == 0 ? 0 : numCpus() / numNodes(); }
  int cpusPerSocket() const { return numSockets() == 0 ? 0 : numCpus() / numSockets(); }
  /// Every physical core has cpusPerCore() CPUs (true of real machines; a partly offline core
  /// makes it false).
  bool uniformCores() const { return uniform_cores_; }

  /// Every CPU.
  const CpuSet& cpus() const { return all_; }
  /// Sorted by cpu id.
  std::span<const CpuDetail> details() const { return details_; }
  /// nullptr for a CPU the topology does not have.
  const CpuDetail* find(int cpu_id) const {
    if (cpu_id < 0 || static_cast<std::size_t>(cpu_id) >= index_by_id_.size())
      return nullptr;
    const int i = index_by_id_[static_cast<std::size_t>(cpu_id)];
    return i < 0 ? nullptr : &details_[static_cast<std::size_t>(i)];
  }

  /// NUMA node ids, ascending, and the mask of them.
  std::span<const int> numaNodeIds() const { return node_ids_; }
  NumaMask numaNodeMask() const { return node_mask_; }
  /// Socket ids, ascending (index = CpuDetail::socket).
  std::span<const int> socketIds() const { return socket_ids_; }
  /// The socket index of a NUMA node; -1 for a node the topology does not have.
  int socketOfNode(int node_id) const;

  /// Empty for an id the topology does not have.
  const CpuSet& cpusInNode(int node_id) const;
  CpuSet cpusInNodes(NumaMask nodes) const;
  const CpuSet& cpusInSocketIndex(int socket) const;
  /// The CPU ids of a physical core (CpuDetail::core), ascending.
  std::span<const int> cpusOfCore(int core) const {
    const auto b = static_cast<std::size_t>(core_offsets_[static_cast<std::size_t>(core)]);
    const auto e = static_cast<std::size_t>(core_offsets_[static_cast<std::size_t>(core) + 1]);
    return std::span<const int>(core_cpus_).subspan(b, e - b);
  }
  /// The physical core (CpuDetail::core) of a CPU; -1 for a CPU the topology does not have.
  int coreOf(int cpu_id) const {
    if (cpu_id < 0 || static_cast<std::size_t>(cpu_id) >= core_by_id_.size())
      return -1;
    return core_by_id_[static_cast<std::size_t>(cpu_id)];
  }
  /// The NUMA node of a physical core.
  int nodeOfCore(int core) const { return core_node_[static_cast<std::size_t>(core)]; }
  int socketOfCore(int core) const { return core_socket_[static_cast<std::size_t>(core)]; }

 private:
  std::vector<CpuDetail> details_;
  std::vector<std::int16_t> index_by_id_;
  std::vector<std::int16_t> core_by_id_;
  CpuSet all_;
  std::vector<int> node_ids_;
  NumaMask node_mask_ = 0;
  std::vector<CpuSet> node_cpus_;  // by position in node_ids_
  std::vector<int> node_socket_;   // by position in node_ids_
  std::vector<int> socket_ids_;
  std::vector<CpuSet> socket_cpus_;  // by socket index
  std::vector<int> core_offsets_;    // numCores() + 1 entries into core_cpus_
  std::vector<int> core_cpus_;
  std::vector<int> core_node_;
  std::vector<int> core_socket_;
  bool uniform_cores_ = false;
};

}  // namespace koord::roles::scheduler::nodenumaresource
