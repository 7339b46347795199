// Node-level readers of /proc (under -proc-root-dir): CPU ticks from /proc/stat and memory from
// /proc/meminfo, the sources of the koordlet's node usage.
#pragma once

#include <cstdint>
#include <filesystem>
#include <vector>

#include "koord/core/expected.h"

namespace koord::cgroup {

struct CpuTicks {
  std::uint64_t user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0,
                steal = 0;
  /// What Koordinator counts as busy: user + nice + system + irq + softirq (not iowait, not
  /// steal, not guest, which user already includes).
  std::uint64_t busy() const { return user + nice + system + irq + softirq; }
};

struct ProcStat {
  CpuTicks total;
  /// cpu0, cpu1, ... in the order /proc/stat lists them (offline CPUs are absent there).
  std::vector<CpuTicks> per_cpu;
};

/// `<proc_root>/stat`. Errors name the file and the line.
Expected<ProcStat> readProcStat(const std::filesystem::path& proc_root);

/// /proc/meminfo, in bytes.
struct MemInfo {
  std::uint64_t total = 0, free = 0, available = 0, buffers = 0, cached = 0, active_file = 0,
                inactive_file = 0, sreclaimable = 0;
  /// MemTotal - MemAvailable: the koordlet's default node memory usage (usageWithoutPageCache).
  std::uint64_t usageWithoutPageCache() const { return total > available ? total - available : 0; }
  /// MemTotal - MemFree (usageWithPageCache).
  std::uint64_t usageWithPageCache() const { return total > free ? total - free : 0; }
};

/// `<proc_root>/meminfo`; MemTotal and MemAvailable are required, the rest default to 0.
Expected<MemInfo> readMemInfo(const std::filesystem::path& proc_root);

/// USER_HZ: the unit of /proc/stat's ticks.
std::int64_t clockTicksPerSecond();

}  // namespace koord::cgroup
