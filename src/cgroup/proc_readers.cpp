#include "koord/cgroup/proc_readers.h"
#include "text_fields.h"

#include <unistd.h>

#include <charconv>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>

#include <fmt/format.h>

namespace koord::cgroup {

namespace fs = std::filesystem;

namespace {

Expected<std::string> slurp(const fs::path& path) {
  std::ifstream in(path);
  if (!in)
    return invalidArgument(fmt::format("read {}: cannot open", path.string()));
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool parseU64(std::string_view s, std::uint64_t& out) {
  auto v = text::parseNumber<std::uint64_t>(s);
  if (v)
    out = *v;
  return v.has_value();
}

std::vector<std::string_view> fields(std::string_view line) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t'))
      ++i;
    auto start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t')
      ++i;
    if (i > start)
      out.push_back(line.substr(start, i - start));
  }
  return out;
}

}  // namespace

Expected<ProcStat> readProcStat(const fs::path& proc_root) {
  const auto path = proc_root / "stat";
  auto text = slurp(path);
  if (!text)
    return text.error();
  ProcStat out;
  bool have_total = false;
  std::string_view rest = *text;
  while (!rest.empty()) {
    auto nl = rest.find('\n');
    auto line = rest.substr(0, nl);
    rest = nl == std::string_view::npos ? std::string_view{} : rest.substr(nl + 1);
    if (line.rfind("cpu", 0) != 0)
      continue;
    auto f = fields(line);
    // Kernels since 2.6.11 print at least user..steal (8 counters).
    if (f.size() < 9) {
      return invalidArgument(
          fmt::format("{}: line {:?}: too few fields", path.string(), std::string(line)));
    }
    CpuTicks t;
    std::uint64_t* slots[] = {&t.user,   &t.nice, &t.system,  &t.idle,
                              &t.iowait, &t.irq,  &t.softirq, &t.steal};
    for (std::size_t i = 0; i < 8; ++i) {
      if (!parseU64(f[i + 1], *slots[i])) {
        return invalidArgument(fmt::format("{}: line {:?}: {:?} is not a counter", path.string(),
                                           std::string(line), std::string(f[i + 1])));
      }
    }
    if (f[0] == "cpu") {
      out.total = t;
      have_total = true;
    } else {
      out.per_cpu.push_back(t);
    }
  }
  if (!have_total)
    return invalidArgument(fmt::format("{}: no cpu line", path.string()));
  return out;
}

Expected<MemInfo> readMemInfo(const fs::path& proc_root) {
  const auto path = proc_root / "meminfo";
  auto text = slurp(path);
  if (!text)
    return text.error();
  MemInfo m;
  bool have_total = false, have_available = false;
  std::string_view rest = *text;
  while (!rest.empty()) {
    auto nl = rest.find('\n');
    auto line = rest.substr(0, nl);
    rest = nl == std::string_view::npos ? std::string_view{} : rest.substr(nl + 1);
    auto f = fields(line);
    if (f.size() < 2)
      continue;
    std::uint64_t* slot = nullptr;
    if (f[0] == "MemTotal:")
      slot = &m.total, have_total = true;
    else if (f[0] == "MemFree:")
      slot = &m.free;
    else if (f[0] == "MemAvailable:")
      slot = &m.available, have_available = true;
    else if (f[0] == "Buffers:")
      slot = &m.buffers;
    else if (f[0] == "Cached:")
      slot = &m.cached;
    else if (f[0] == "Active(file):")
      slot = &m.active_file;
    else if (f[0] == "Inactive(file):")
      slot = &m.inactive_file;
    else if (f[0] == "SReclaimable:")
      slot = &m.sreclaimable;
    if (slot == nullptr)
      continue;
    std::uint64_t kb = 0;
    if (!parseU64(f[1], kb) || (f.size() > 2 && f[2] != "kB")) {
      return invalidArgument(
          fmt::format("{}: line {:?}: not \"<n> kB\"", path.string(), std::string(line)));
    }
    *slot = kb * 1024;
  }
  if (!have_total || !have_available)
    return invalidArgument(fmt::format("{}: no MemTotal or MemAvailable", path.string()));
  return m;
}

std::int64_t clockTicksPerSecond() {
  static const std::int64_t hz = [] {
    long v = ::sysconf(_SC_CLK_TCK);
    return v > 0 ? static_cast<std::int64_t>(v) : 100;
  }();
  return hz;
}

}  // namespace koord::cgroup
