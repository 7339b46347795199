#include "koord/cgroup/cgroup_reader.h"

#include <array>
#include <charconv>
#include <functional>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "koord/cgroup/cpu_topology.h"
#include "koord/cgroup/resource_executor.h"
#include "text_fields.h"

namespace koord::cgroup {

namespace {

// "key value" lines (memory.stat, cpu.stat): the values of the keys asked for, in their order
// (absent ones empty). Every line must parse, so a garbled file never reads as zero usage; the
// file's path is made only for that error. Nothing is allocated per line: these files are read
// for every pod every second.
template <std::size_t N>
Expected<std::array<std::optional<std::uint64_t>, N>> scanKeyValues(
    std::string_view content, const std::array<std::string_view, N>& keys,
    const std::function<std::string()>& what) {
  std::array<std::optional<std::uint64_t>, N> out{};
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
          fmt::format("{}: line {:?} is not \"key value\"", what(), std::string(line)));
    }
    const auto key = line.substr(0, space);
    for (std::size_t i = 0; i < N; ++i) {
      if (key == keys[i] && !out[i])
        out[i] = *value;
    }
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
  const auto what = [&] { return e.pathOf(dir, Resource::kMemoryStat).string(); };
  const bool v1 = e.root().version == CgroupVersion::kV1;
  static constexpr std::array<std::string_view, 3> kV1Keys{
      "total_inactive_anon", "total_active_anon", "total_unevictable"};
  static constexpr std::array<std::string_view, 3> kV2Keys{"inactive_anon", "active_anon",
                                                           "unevictable"};
  const auto& keys = v1 ? kV1Keys : kV2Keys;
  auto kv = scanKeyValues(*text, keys, what);
  if (!kv)
    return kv.error();
  std::uint64_t sum = 0;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (!(*kv)[i])
      return invalidArgument(fmt::format("{}: no {}", what(), keys[i]));
    sum += *(*kv)[i];
  }
  return sum;
}

Expected<CpuThrottling> readCpuThrottling(const ResourceExecutor& e, std::string_view dir) {
  auto text = e.read(dir, Resource::kCpuStat);
  if (!text)
    return text.error();
  const bool v1 = e.root().version == CgroupVersion::kV1;
  auto kv = scanKeyValues(*text,
                          std::array<std::string_view, 3>{"nr_periods", "nr_throttled",
                                                          v1 ? "throttled_time" : "throttled_usec"},
                          [&] { return e.pathOf(dir, Resource::kCpuStat).string(); });
  if (!kv)
    return kv.error();
  CpuThrottling t;
  t.nr_periods = (*kv)[0].value_or(0);
  t.nr_throttled = (*kv)[1].value_or(0);
  t.throttled_nanos = v1 ? (*kv)[2].value_or(0) : (*kv)[2].value_or(0) * 1000;
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
