// Typed usage readers over a ResourceExecutor: CPU time, memory without page cache and CFS
// throttling of one cgroup, the same numbers for v1 and v2.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "koord/core/expected.h"

namespace koord::cgroup {

class ResourceExecutor;
enum class Resource;

/// A resource whose file holds one integer, in v1 terms (cpu.max's quota half as -1 for "max").
Expected<std::int64_t> readInt64(const ResourceExecutor& e, std::string_view dir, Resource r);
/// cpuset.cpus as CPU ids.
Expected<std::vector<int>> readCpuSet(const ResourceExecutor& e, std::string_view dir);

/// Cumulative CPU time in nanoseconds: v1 cpuacct.usage, v2 cpu.stat usage_usec x 1000.
Expected<std::uint64_t> readCpuUsageNanos(const ResourceExecutor& e, std::string_view dir);

/// Memory in use without page cache, as Koordinator counts it: v1 memory.stat
/// total_inactive_anon + total_active_anon + total_unevictable (hierarchical, so a pod includes
/// its containers), v2 memory.stat inactive_anon + active_anon + unevictable.
Expected<std::uint64_t> readMemoryUsageBytes(const ResourceExecutor& e, std::string_view dir);

struct CpuThrottling {
  std::uint64_t nr_periods = 0;
  std::uint64_t nr_throttled = 0;
  std::uint64_t throttled_nanos = 0;
};
/// cpu.stat: v1 throttled_time (ns), v2 throttled_usec.
Expected<CpuThrottling> readCpuThrottling(const ResourceExecutor& e, std::string_view dir);
/// Throttled periods over elapsed periods between two readings; 0 when no period elapsed (as
/// Koordinator has it); nullopt when a counter went backwards (the cgroup was made anew).
std::optional<double> throttledRatio(const CpuThrottling& before, const CpuThrottling& now);

}  // namespace koord::cgroup
