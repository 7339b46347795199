#include "koord/cgroup/cgroup_reader.h"

#include <charconv>
#include <map>
#include <string>

#include <fmt/format.h>

#include "koord/cgroup/cpu_topology.h"
#include "koord/cgroup/resource_executor.h"
#include "text_fields.h"

namespace koord::cgroup {

namespace {

// "key value" lines (memory.stat, cpu.stat) into the keys asked for; a line that does not parse
// is an error naming it, so a garbled file never reads as zero usage.
Expected<std::map<std::string, std::uint64_t, std::less<>>> parseKeyValues(std::string_view content,
                                                                           std::string_view what) {
  std::map<std::string, std::uint64_t, std::less<>> out;
  while (!content.empty()) {
    auto nl = content.find('\n');
    auto line = content.substr(0, nl);
    content = nl == std::string_view::npos ? std::string_view{} : content.substr(nl + 1);
    if (line.empty())
      continue;
    auto space = line.find(' ');
    auto value = space == std::string_view::npos
                     ? std::optional<std::uint64_t>()
                     : text::parseNumber<std::uint64_t>(line.substr(space + 1));
    if (!value) {
      return invalidArgument(
          fmt::format("{}: line {:?} is not \"key value\"", what, std::string(line)));
    }
    out.emplace(std::string(line.substr(0, space)), *value);
  }
  return out;
}

}  // namespace

Expected<std::int64_t> readInt64(const ResourceExecutor& e, std::string_view dir, Resource r) {
  auto text = e.read(dir, r);
  if (!text)
    return text.error();
  auto v = text::parseNumber<std::int64_t>(*text);
  if (!v) {
    return invalidArgument(
        fmt::format("{}: {:?} is not an integer", e.pathOf(dir, r).string(), *text));
  }
  return *v;
}

Expected<std::vector<int>> readCpuSet(const ResourceExecutor& e, std::string_view dir) {
  auto text = e.read(dir, Resource::kCpusetCpus);
  if (!text)
    return text.error();
  return parseCpuList(*text);
}

Expected<std::uint64_t> readCpuUsageNanos(const ResourceExecutor& e, std::string_view dir) {
  auto text = e.read(dir, Resource::kCpuAcctUsage);
  if (!text)
    return text.error();
  auto v = text::parseNumber<std::uint64_t>(*text);
  if (!v) {
    return invalidArgument(fmt::format("{}: {:?} is not a counter",
                                       e.pathOf(dir, Resource::kCpuAcctUsage).string(), *text));
  }
  return *v;
}

Expected<std::uint64_t> readMemoryUsageBytes(const ResourceExecutor& e, std::string_view dir) {
  auto text = e.read(dir, Resource::kMemoryStat);
  if (!text)
    return text.error();
  auto kv = parseKeyValues(*text, e.pathOf(dir, Resource::kMemoryStat).string());
  if (!kv)
    return kv.error();
  const bool v1 = e.root().version == CgroupVersion::kV1;
  const char* keys[] = {"inactive_anon", "active_anon", "unevictable"};
  std::uint64_t sum = 0;
  for (const char* key : keys) {
    std::string name = v1 ? fmt::format("total_{}", key) : std::string(key);
    auto it = kv->find(name);
    if (it == kv->end()) {
      return invalidArgument(
          fmt::format("{}: no {}", e.pathOf(dir, Resource::kMemoryStat).string(), name));
    }
    sum += it->second;
  }
  return sum;
}

Expected<CpuThrottling> readCpuThrottling(const ResourceExecutor& e, std::string_view dir) {
  auto text = e.read(dir, Resource::kCpuStat);
  if (!text)
    return text.error();
  auto kv = parseKeyValues(*text, e.pathOf(dir, Resource::kCpuStat).string());
  if (!kv)
    return kv.error();
  auto get = [&](std::string_view k) {
    auto it = kv->find(k);
    return it == kv->end() ? std::uint64_t{0} : it->second;
  };
  CpuThrottling t;
  t.nr_periods = get("nr_periods");
  t.nr_throttled = get("nr_throttled");
  t.throttled_nanos =
      e.root().version == CgroupVersion::kV1 ? get("throttled_time") : get("throttled_usec") * 1000;
  return t;
}

std::optional<double> throttledRatio(const CpuThrottling& before, const CpuThrottling& now) {
  if (now.nr_periods < before.nr_periods || now.nr_throttled < before.nr_throttled)
    return std::nullopt;
  const std::uint64_t periods = now.nr_periods - before.nr_periods;
  if (periods == 0)
    return 0.0;
  return static_cast<double>(now.nr_throttled - before.nr_throttled) / static_cast<double>(periods);
}

}  // namespace koord::cgroup
