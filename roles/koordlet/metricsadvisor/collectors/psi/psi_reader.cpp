#include "metricsadvisor/collectors/psi/psi_reader.h"

#include <array>
#include <charconv>
#include <cmath>

#include <fmt/format.h>

#include "koord/cgroup/resource_executor.h"
#include "statesinformer/node_topology.h"

namespace koord::roles::koordlet::metricsadvisor {

namespace {

// The kernel writes one space between fields and ends each line with '\n'.
constexpr std::size_t kMaxLines = 2;

bool parsePercent(std::string_view s, double& out) {
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && end == s.data() + s.size() && std::isfinite(out) && out >= 0 &&
         out <= 100;
}

bool parseCounter(std::string_view s, std::uint64_t& out) {
  if (s.empty() || s.front() == '+')
    return false;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && end == s.data() + s.size();
}

// "avg10=0.00 avg60=0.00 avg300=0.00 total=0", in that order.
bool parseFields(std::string_view rest, PSILine& line) {
  constexpr std::array<std::string_view, 4> kKeys{"avg10=", "avg60=", "avg300=", "total="};
  std::array<std::string_view, 4> values;
  for (std::size_t i = 0; i < kKeys.size(); ++i) {
    if (rest.substr(0, kKeys[i].size()) != kKeys[i])
      return false;
    rest.remove_prefix(kKeys[i].size());
    const auto space = rest.find(' ');
    const bool last = i + 1 == kKeys.size();
    if (last != (space == std::string_view::npos))
      return false;
    values[i] = rest.substr(0, space);
    rest = last ? std::string_view{} : rest.substr(space + 1);
  }
  return parsePercent(values[0], line.avg10) && parsePercent(values[1], line.avg60) &&
         parsePercent(values[2], line.avg300) && parseCounter(values[3], line.total);
}

}  // namespace

kube::Expected<PSIStats> parsePSI(std::string_view content) {
  PSIStats stats;
  bool have_some = false;
  std::size_t lines = 0;
  while (!content.empty()) {
    const auto nl = content.find('\n');
    const auto line = content.substr(0, nl);
    content = nl == std::string_view::npos ? std::string_view{} : content.substr(nl + 1);
    if (line.empty())
      continue;
    auto bad = [&](std::string_view why) {
      return invalidArgument(fmt::format("pressure line {:?}: {}", std::string(line), why));
    };
    if (++lines > kMaxLines)
      return bad("more than a some and a full line");
    const auto space = line.find(' ');
    const auto prefix = line.substr(0, space);
    PSILine* target = nullptr;
    if (prefix == "some") {
      if (have_some)
        return bad("repeated");
      have_some = true;
      target = &stats.some;
    } else if (prefix == "full") {
      if (stats.full_supported)
        return bad("repeated");
      stats.full_supported = true;
      target = &stats.full;
    } else {
      return bad("neither some nor full");
    }
    if (space == std::string_view::npos || !parseFields(line.substr(space + 1), *target))
      return bad("not avg10=<pct> avg60=<pct> avg300=<pct> total=<n>");
  }
  if (!have_some)
    return invalidArgument("pressure file has no some line");
  return stats;
}

kube::Expected<PSIByResource> readPSI(const cgroup::ResourceExecutor& e, std::string_view dir) {
  PSIByResource out;
  const std::pair<cgroup::Resource, PSIStats*> files[] = {
      {cgroup::Resource::kCpuPressure, &out.cpu},
      {cgroup::Resource::kMemoryPressure, &out.mem},
      {cgroup::Resource::kIOPressure, &out.io}};
  for (const auto& [resource, stats] : files) {
    auto text = e.read(dir, resource);
    if (!text)
      return text.error();
    auto parsed = parsePSI(*text);
    if (!parsed) {
      return invalidArgument(
          fmt::format("{}: {}", e.pathOf(dir, resource).string(), parsed.error().message));
    }
    *stats = *parsed;
  }
  return out;
}

kube::Expected<PSIByResource> readNodePSI(const std::filesystem::path& proc_root) {
  PSIByResource out;
  const std::pair<const char*, PSIStats*> files[] = {
      {"cpu", &out.cpu}, {"memory", &out.mem}, {"io", &out.io}};
  for (const auto& [name, stats] : files) {
    const auto path = proc_root / "pressure" / name;
    // A pressure file is two short lines; the bound only stops a hostile or broken procfs.
    auto text = readFileBounded(path, 4096);
    if (!text)
      return text.error();
    if (!*text)
      return invalidArgument(fmt::format("{}: no such file", path.string()));
    auto parsed = parsePSI(**text);
    if (!parsed)
      return invalidArgument(fmt::format("{}: {}", path.string(), parsed.error().message));
    *stats = *parsed;
  }
  return out;
}

}  // namespace koord::roles::koordlet::metricsadvisor
