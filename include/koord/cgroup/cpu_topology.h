// The node's logical CPUs as sysfs describes them (core, socket, NUMA node of each), and the
// kernel's CPU list syntax ("0-3,8,10-11") that cpuset.cpus and sysfs cpulist files use.
#pragma once

#include <cstddef>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "koord/core/expected.h"

namespace koord::cgroup {

/// The largest CPU id a list may name: Linux's NR_CPUS tops out at 8192.
inline constexpr int kMaxCpuId = 8191;
/// The longest CPU list parsed: naming each of the kMaxCpuId + 1 ids once, singly, takes under
/// 40 KiB, so anything longer only repeats ids or pads them. Lists also arrive in pods' and
/// nodes' annotations, where a repeated "0-8191" must not cost more than a list of every CPU.
inline constexpr std::size_t kMaxCpuListBytes = 64 * 1024;

/// One logical CPU. core_id is sysfs' own: unique only within a socket, so (socket_id, core_id)
/// names a physical core and hyper-thread siblings share both.
struct CpuInfo {
  int cpu_id = 0;
  int core_id = 0;
  int socket_id = 0;
  int node_id = 0;

  friend bool operator==(const CpuInfo&, const CpuInfo&) = default;
};

struct CpuTopology {
  /// The online CPUs, ordered by cpu_id.
  std::vector<CpuInfo> cpus;

  /// nullptr when `cpu_id` is not online.
  const CpuInfo* find(int cpu_id) const;
};

/// Reads `<sys_root>/devices/system/cpu/online`, each online CPU's topology/core_id and
/// topology/physical_package_id, and `<sys_root>/devices/system/node/node*/cpulist`. Offline CPUs
/// are left out: their topology files are unreadable, and no cgroup may use them. Without a
/// node directory (a kernel built without NUMA) every CPU is on node 0; a package id of -1 (no
/// socket information, some virtual machines) reads as socket 0. An error names the file that
/// is missing or malformed.
Expected<CpuTopology> readCpuTopology(const std::filesystem::path& sys_root = "/sys");

/// Parses a CPU list: comma-separated ids and inclusive "a-b" ranges, surrounding whitespace
/// (the trailing newline of a sysfs or cgroup file) ignored. Returns the ids sorted and without
/// duplicates; an empty list (an empty cpuset.cpus) is valid. Refused: empty items, signs,
/// spaces inside, reversed ranges, the kernel's "a-b:stride/group" form (no file writes it), ids
/// above kMaxCpuId, and lists (whitespace trimmed) longer than kMaxCpuListBytes. Overlapping
/// ranges are merged before they are expanded: the work and the result stay bounded by the
/// list's length and kMaxCpuId.
Expected<std::vector<int>> parseCpuList(std::string_view text);

/// The kernel's spelling of `cpus` (any order, duplicates allowed): "0-3,8,10-11"; "" when
/// empty.
std::string formatCpuList(std::span<const int> cpus);

}  // namespace koord::cgroup
