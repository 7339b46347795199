// The process_* series every Go component exports (Prometheus' process collector), read from
// /proc at each scrape: CPU time, memory, file descriptors and start time, for every role.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "koord/core/metrics.h"

namespace koord::metrics {

/// What /proc/self/stat says, in the collector's units.
struct ProcessStat {
  double cpu_seconds = 0;  // utime + stime
  double start_ticks = 0;  // since boot, in clock ticks
  std::uint64_t virtual_bytes = 0;
  std::uint64_t resident_pages = 0;
};

/// Parses a /proc/<pid>/stat line (the command may hold spaces and parentheses); nullopt when
/// the fields are not there.
std::optional<ProcessStat> parseProcessStat(std::string_view text, double ticks_per_second);

/// Registers process_cpu_seconds_total, process_resident_memory_bytes,
/// process_virtual_memory_bytes, process_virtual_memory_max_bytes, process_open_fds,
/// process_max_fds and process_start_time_seconds in `registry`; they are collected while this
/// lives.
class ProcessMetrics {
 public:
  explicit ProcessMetrics(Registry& registry);

 private:
  CollectedFamily cpu_;
  CollectedFamily resident_;
  CollectedFamily virtual_;
  CollectedFamily virtual_max_;
  CollectedFamily open_fds_;
  CollectedFamily max_fds_;
  CollectedFamily start_time_;
};

}  // namespace koord::metrics
