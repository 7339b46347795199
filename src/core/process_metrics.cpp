#include "koord/core/process_metrics.h"

#include <dirent.h>
#include <sys/resource.h>
#include <unistd.h>

#include <charconv>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

namespace koord::metrics {

namespace {

std::string readFile(const char* path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

double ticksPerSecond() {
  const long ticks = sysconf(_SC_CLK_TCK);
  return ticks > 0 ? static_cast<double>(ticks) : 100.0;
}

// The kernel's boot time (/proc/stat's btime), in seconds since the epoch.
std::optional<double> bootTime() {
  const std::string text = readFile("/proc/stat");
  const auto at = text.find("\nbtime ");
  if (at == std::string::npos)
    return std::nullopt;
  std::uint64_t v = 0;
  const char* begin = text.data() + at + 7;
  if (std::from_chars(begin, text.data() + text.size(), v).ec != std::errc())
    return std::nullopt;
  return static_cast<double>(v);
}

std::optional<double> openFds() {
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr)
    return std::nullopt;
  double count = 0;
  while (const dirent* e = readdir(dir)) {
    if (e->d_name[0] != '.')
      ++count;
  }
  closedir(dir);
  return count - 1;  // the directory's own descriptor
}

// A soft limit as the Go collector reports it: unlimited is the largest uint64.
std::optional<double> softLimit(int resource) {
  rlimit limit{};
  if (getrlimit(resource, &limit) != 0)
    return std::nullopt;
  if (limit.rlim_cur == RLIM_INFINITY)
    return static_cast<double>(std::numeric_limits<std::uint64_t>::max());
  return static_cast<double>(limit.rlim_cur);
}

std::optional<ProcessStat> selfStat() {
  return parseProcessStat(readFile("/proc/self/stat"), ticksPerSecond());
}

// One series without labels, when `value` has one.
std::function<void(const SeriesSink&)> single(std::function<std::optional<double>()> value) {
  return [value = std::move(value)](const SeriesSink& sink) {
    if (auto v = value())
      sink({}, *v);
  };
}

// One series from a field of /proc/self/stat, read at each scrape.
std::function<void(const SeriesSink&)> fromStat(std::function<double(const ProcessStat&)> field) {
  return single([field = std::move(field)]() -> std::optional<double> {
    auto s = selfStat();
    return s ? std::optional(field(*s)) : std::nullopt;
  });
}

// When this process started, in seconds since the epoch; it does not change, so it is read once.
std::optional<double> startTime() {
  auto s = selfStat();
  auto boot = bootTime();
  if (!s || !boot)
    return std::nullopt;
  return *boot + s->start_ticks / ticksPerSecond();
}

}  // namespace

std::optional<ProcessStat> parseProcessStat(std::string_view text, double ticks_per_second) {
  // Fields after the command's closing parenthesis: state is field 3, utime 14, stime 15,
  // starttime 22, vsize 23, rss 24.
  const auto close = text.rfind(')');
  if (close == std::string_view::npos)
    return std::nullopt;
  std::vector<std::string_view> fields;
  std::size_t pos = close + 1;
  while (pos < text.size() && fields.size() < 22) {
    while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\n'))
      ++pos;
    const std::size_t end = std::min(text.find_first_of(" \n", pos), text.size());
    if (end > pos)
      fields.push_back(text.substr(pos, end - pos));
    pos = end;
  }
  if (fields.size() < 22)
    return std::nullopt;
  auto number = [](std::string_view s, std::uint64_t& out) {
    return std::from_chars(s.data(), s.data() + s.size(), out).ec == std::errc();
  };
  // fields[0] is field 3 (state).
  std::uint64_t utime = 0, stime = 0, start = 0, vsize = 0, rss = 0;
  if (!number(fields[11], utime) || !number(fields[12], stime) || !number(fields[19], start) ||
      !number(fields[20], vsize) || !number(fields[21], rss))
    return std::nullopt;
  ProcessStat out;
  out.cpu_seconds = static_cast<double>(utime + stime) / ticks_per_second;
  out.start_ticks = static_cast<double>(start);
  out.virtual_bytes = vsize;
  out.resident_pages = rss;
  return out;
}

ProcessMetrics::ProcessMetrics(Registry& registry)
    : cpu_(registry.collectedCounter("process_cpu_seconds_total",
                                     "Total user and system CPU time spent in seconds.", {},
                                     fromStat([](const ProcessStat& s) { return s.cpu_seconds; }))),
      resident_(registry.collectedGauge("process_resident_memory_bytes",
                                        "Resident memory size in bytes.", {},
                                        fromStat([](const ProcessStat& s) {
                                          return static_cast<double>(s.resident_pages) *
                                                 static_cast<double>(sysconf(_SC_PAGESIZE));
                                        }))),
      virtual_(registry.collectedGauge(
          "process_virtual_memory_bytes", "Virtual memory size in bytes.", {},
          fromStat([](const ProcessStat& s) { return static_cast<double>(s.virtual_bytes); }))),
      virtual_max_(registry.collectedGauge("process_virtual_memory_max_bytes",
                                           "Maximum amount of virtual memory available in bytes.",
                                           {}, single([] { return softLimit(RLIMIT_AS); }))),
      open_fds_(registry.collectedGauge("process_open_fds", "Number of open file descriptors.", {},
                                        single(openFds))),
      max_fds_(registry.collectedGauge("process_max_fds",
                                       "Maximum number of open file descriptors.", {},
                                       single([] { return softLimit(RLIMIT_NOFILE); }))),
      start_time_(registry.collectedGauge("process_start_time_seconds",
                                          "Start time of the process since unix epoch in seconds.",
                                          {}, single([start = startTime()] { return start; }))) {}

}  // namespace koord::metrics
