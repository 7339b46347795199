// Pressure stall information as the kernel writes it (/proc/pressure/* and a cgroup's
// cpu.pressure, memory.pressure, io.pressure): the "some" and "full" lines, parsed and read.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string_view>

#include "koord/kube/error.h"

namespace koord::cgroup {
class ResourceExecutor;
}

namespace koord::roles::koordlet::metricsadvisor {

/// One line's averages, in percent of wall time over 10, 60 and 300 seconds; total in µs.
struct PSILine {
  double avg10 = 0;
  double avg60 = 0;
  double avg300 = 0;
  std::uint64_t total = 0;
};

struct PSIStats {
  PSILine some;
  /// All zeros when the kernel writes no full line (CPU pressure on older kernels).
  PSILine full;
  bool full_supported = false;
};

struct PSIByResource {
  PSIStats cpu;
  PSIStats mem;
  PSIStats io;
};

/// One pressure file: a "some" line and at most one "full" line, each
/// "<some|full> avg10=<pct> avg60=<pct> avg300=<pct> total=<µs>". An unknown or repeated line, a
/// field out of order, a percentage outside [0, 100], more than two lines or no "some" line is an
/// error quoting the line.
kube::Expected<PSIStats> parsePSI(std::string_view content);

/// cpu.pressure, memory.pressure and io.pressure of cgroup `dir` (as the executor lays out
/// Resource::kCpuPressure, kMemoryPressure, kIOPressure); the first error names its file.
kube::Expected<PSIByResource> readPSI(const cgroup::ResourceExecutor& e, std::string_view dir);

/// The node's pressure: <proc_root>/pressure/cpu, memory and io; the first error names its file.
kube::Expected<PSIByResource> readNodePSI(const std::filesystem::path& proc_root);

}  // namespace koord::roles::koordlet::metricsadvisor
