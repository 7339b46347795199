#include "metricsadvisor/collectors/cpi/cgroup_cpi_counters.h"

#include <fmt/format.h>

#include <array>
#include <string_view>

namespace koord::roles::koordlet::metricsadvisor {

namespace {

Error errnoError(int err, std::string_view what) {
  boost::system::error_code code(err, boost::system::system_category());
  return Error(fmt::format("{}: {}", what, code.message()), code);
}

}  // namespace

Expected<CPICounts> parseCPIGroupRead(std::span<const std::uint64_t> words, long bytes) {
  constexpr long kWant = static_cast<long>(kCPIGroupReadWords * sizeof(std::uint64_t));
  if (bytes != kWant || words.size() < kCPIGroupReadWords)
    return invalidArgument(fmt::format("group read of {} bytes, want {}", bytes, kWant));
  if (words[0] != 2)
    return invalidArgument(fmt::format("group of {} counters, want 2", words[0]));
  const std::uint64_t enabled = words[1];
  const std::uint64_t running = words[2];
  // A counter multiplexed with others ran part of the time: extrapolate to the whole window.
  const double scale = enabled != 0 && running != 0
                           ? static_cast<double>(enabled) / static_cast<double>(running)
                           : 1.0;
  return CPICounts{static_cast<double>(words[3]) * scale, static_cast<double>(words[4]) * scale};
}

Expected<CgroupCPICounters> CgroupCPICounters::open(PerfEventApi& api, int cgroup_fd,
                                                    std::span<const int> cpus) {
  CgroupCPICounters c(api);
  c.groups_.reserve(cpus.size());
  for (int cpu : cpus) {
    const int leader = api.open(HwCounter::kCycles, cgroup_fd, cpu, -1);
    if (leader < 0)
      return errnoError(-leader, fmt::format("perf_event_open cycles on cpu {}", cpu));
    Group g{cpu, PerfFd(api, leader), {}};
    const int member = api.open(HwCounter::kInstructions, cgroup_fd, cpu, leader);
    if (member < 0)
      return errnoError(-member, fmt::format("perf_event_open instructions on cpu {}", cpu));
    g.instructions = PerfFd(api, member);
    if (const int rc = api.enable(leader); rc < 0)
      return errnoError(-rc, fmt::format("enabling the counters on cpu {}", cpu));
    c.groups_.push_back(std::move(g));
  }
  return c;
}

Expected<CPICounts> CgroupCPICounters::read() const {
  CPICounts sum;
  for (const Group& g : groups_) {
    std::array<std::uint64_t, kCPIGroupReadWords> words{};
    const long n = api_->read(g.cycles.get(), words);
    if (n < 0)
      return errnoError(static_cast<int>(-n), fmt::format("reading the counters of cpu {}", g.cpu));
    auto counts = parseCPIGroupRead(words, n);
    if (!counts)
      return invalidArgument(fmt::format("cpu {}: {}", g.cpu, counts.error().message));
    sum.cycles += counts->cycles;
    sum.instructions += counts->instructions;
  }
  return sum;
}

}  // namespace koord::roles::koordlet::metricsadvisor
