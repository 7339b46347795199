// One container's cycles and instructions counters: a group (cycles leading, instructions
// following) per CPU, counting the tasks of its perf_event cgroup, opened for one window.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "koord/core/expected.h"
#include "metricsadvisor/collectors/cpi/perf_event_api.h"

namespace koord::roles::koordlet::metricsadvisor {

struct CPICounts {
  double cycles = 0;
  double instructions = 0;
};

/// Words of one group read: nr, time_enabled, time_running, cycles, instructions.
inline constexpr std::size_t kCPIGroupReadWords = 5;

/// One CPU's group read (`bytes` as read(2) returned them) as counts scaled by time_enabled /
/// time_running, as Koordinator scales a multiplexed counter (unscaled when either is zero).
/// An error for a short read or a group of other than two counters.
Expected<CPICounts> parseCPIGroupRead(std::span<const std::uint64_t> words, long bytes);

/// Move-only; every fd is closed when the object goes.
class CgroupCPICounters {
 public:
  /// Opens and enables a group on each of `cpus` for the cgroup directory open on `cgroup_fd`
  /// (which may be closed afterwards: the counters hold the cgroup). All or nothing: on an
  /// error (its code the errno, its message naming the counter and CPU) nothing stays open.
  static Expected<CgroupCPICounters> open(PerfEventApi& api, int cgroup_fd,
                                          std::span<const int> cpus);

  /// The counts since open(), summed over the CPUs.
  Expected<CPICounts> read() const;
  /// Open fds: two per CPU.
  std::size_t fds() const { return 2 * groups_.size(); }

 private:
  explicit CgroupCPICounters(PerfEventApi& api) : api_(&api) {}

  struct Group {
    int cpu;
    PerfFd cycles;  // the leader: reads both
    PerfFd instructions;
  };
  PerfEventApi* api_;
  std::vector<Group> groups_;
};

}  // namespace koord::roles::koordlet::metricsadvisor
