// What Filter and Score need of a node in the common case (no NUMA policy to admit), packed in
// one word that the cache republishes under the node's lock and the cycle reads without it.
#pragma once

#include <cstdint>

#include "plugins/nodenumaresource/numa_policy.h"

namespace koord::roles::scheduler::nodenumaresource {

/// A node's policies and free-CPU counts as of its last change. `usable` is false when the word
/// cannot answer (the Node not seen yet, an unreadable label or NodeResourceTopology, counts
/// past the word's fields): the caller then takes the node's lock and reads the whole state.
struct NodeSummary {
  bool usable = false;
  NodeCpuBindPolicy node_bind = NodeCpuBindPolicy::kNone;
  /// The node's NUMA topology policy: its label's, else the kubelet's.
  NumaTopologyPolicy numa_policy = NumaTopologyPolicy::kNone;
  bool topology_valid = false;
  int cpus_per_core = 0;
  /// CPUs a pod may still be bound to (Koordinator's getAvailableCPUs, nothing preferred)...
  int free_cpus = 0;
  /// ... of them, those on cores wholly free (FullPCPUs) ...
  int free_full_pcpus = 0;
  /// ... and one per core with any free (SpreadByPCPUs).
  int free_spread_pcpus = 0;

  /// cpusMayFit's answer for `needed` CPUs bound by `policy`, required or not.
  bool cpusMayFit(int needed, CpuBindPolicy policy, bool required) const {
    if (free_cpus < needed)
      return false;
    if (!required)
      return true;
    switch (policy) {
      case CpuBindPolicy::kFullPCPUs:
        return free_full_pcpus >= needed;
      case CpuBindPolicy::kSpreadByPCPUs:
        return free_spread_pcpus >= needed;
      default:
        return true;
    }
  }

  /// Largest count and cpus_per_core a word holds; beyond them it is not usable.
  static constexpr int kMaxCount = 0xffff;
  static constexpr int kMaxCpusPerCore = 0xf;

  std::uint64_t pack() const;
  static NodeSummary unpack(std::uint64_t word);
};

}  // namespace koord::roles::scheduler::nodenumaresource
