// The cgroup files koord reads and writes, as one table: each resource's v1 subsystem and file,
// its v2 file, and the range a written value must fall in. Nothing outside this table is touched.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "koord/cgroup/cgroup_version.h"
#include "koord/core/expected.h"

namespace koord::cgroup {

enum class Resource {
  kCpuShares,     // v1 cpu.shares          <-> v2 cpu.weight (converted)
  kCpuCfsQuota,   // v1 cpu.cfs_quota_us    <-> v2 cpu.max, first field ("max" = -1)
  kCpuCfsPeriod,  // v1 cpu.cfs_period_us   <-> v2 cpu.max, second field
  kCpuCfsBurst,   // v1 cpu.cfs_burst_us    <-> v2 cpu.max.burst
  kCpuIdle,       // cpu.idle (both; Linux 5.15+): 1 puts the group under SCHED_IDLE
  kCpuStat,       // v1 cpu.stat            <-> v2 cpu.stat (read only)
  kCpuAcctUsage,  // v1 cpuacct.usage (ns)  <-> v2 cpu.stat usage_usec (read only)
  kCpusetCpus,    // cpuset.cpus (v2: cpuset.cpus)
  kCpusetMems,    // cpuset.mems
  kMemoryLimit,   // v1 memory.limit_in_bytes <-> v2 memory.max ("max" = -1)
  kMemoryUsage,   // v1 memory.usage_in_bytes <-> v2 memory.current (read only)
  kMemoryStat,    // memory.stat (read only)
  kCgroupProcs,   // cgroup.procs (read only here)
  // PSI, read only: cpu.pressure, memory.pressure, io.pressure (v1: under cpuacct, on kernels
  // that put them there at all).
  kCpuPressure,
  kMemoryPressure,
  kIOPressure,
  kCpuBvtWarpNs,   // cpu.bvt_warp_ns (both; Anolis kernels): group identity, -1..2
  kCgroupThreads,  // v1 tasks (under cpu) <-> v2 cgroup.threads: thread ids (read only)
  // Memory QoS (both versions where the kernel has them: v2, and Anolis kernels on v1), in bytes
  // or "max": memory.min, memory.low, memory.high.
  kMemoryMin,
  kMemoryLow,
  kMemoryHigh,
  // Anolis kernels only: async reclaim watermarks (ratio 0..100, scale factor 1..1000, min adj
  // -25..50), the OOM priority (0..12) and its switch (0 or 1), and memory.oom.group (0 or 1).
  kMemoryWmarkRatio,
  kMemoryWmarkScaleFactor,
  kMemoryWmarkMinAdj,
  kMemoryPriority,
  kMemoryUsePriorityOom,
  kMemoryOomGroup,
  // Block I/O (v1 blkio, v2 io): each value is one device's "MAJ:MIN <setting>". The throttles
  // are v1's blkio.throttle.{read,write}_{bps,iops}_device ("MAJ:MIN N", 0 = none) and v2's
  // io.max, one key each ("MAJ:MIN rbps=N|max"). The weight (1..100) is Anolis' v1
  // blkio.cost.weight and v2's io.weight. blk-iocost's QoS and cost model ("MAJ:MIN key=value
  // ...") are the root cgroup's only: v1 (Anolis) blkio.cost.{qos,model}, v2 io.cost.{qos,model}.
  kBlkioReadBps,
  kBlkioWriteBps,
  kBlkioReadIops,
  kBlkioWriteIops,
  kBlkioWeight,
  kBlkioCostQos,
  kBlkioCostModel,
};

struct ResourceFile {
  /// v1 subsystem directory under the root ("cpu", "cpuacct", "cpuset", "memory"); empty on v2.
  std::string_view subsystem;
  std::string_view file;
};

/// Where `r` lives for `v`.
ResourceFile resourceFile(Resource r, CgroupVersion v);

/// For logs and errors: the v1 file name, which operators know best.
std::string_view resourceName(Resource r);

/// The resource whose v1 or v2 file is `file_name`; nullopt for any file outside the table (the
/// allowlist for callers that are handed a file name, such as a runtime hook's answer).
std::optional<Resource> resourceByFileName(std::string_view file_name);

bool resourceWritable(Resource r);

/// Checks a value given in v1 terms (shares 2..262144, quota -1 or 1000.., period
/// 1000..1000000, burst >= 0, idle 0 or 1, memory limit -1 or > 0, cpuset lists in the kernel's
/// syntax) and returns it normalized (trimmed, canonical integer). The error names the resource.
Expected<std::string> validateValue(Resource r, std::string_view value);

/// The io.max key of a throttle row ("rbps", "wbps", "riops", "wiops"); "" for any other row.
std::string_view ioMaxKey(Resource r);

/// cpu.shares -> cpu.weight as the kernel's cgroup v1 compatibility does:
/// 1 + (shares - 2) * 9999 / 262142, so 2 -> 1, 1024 -> 39, 262144 -> 10000.
std::int64_t sharesToWeight(std::int64_t shares);
/// The inverse, for reading cpu.weight back as shares: 2 + ceil((weight - 1) * 262142 / 9999).
std::int64_t weightToShares(std::int64_t weight);

}  // namespace koord::cgroup
