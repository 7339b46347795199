#include "koord/cgroup/cgroup_resource.h"
#include "koord/cgroup/cpu_topology.h"
#include "text_fields.h"

#include <array>
#include <charconv>
#include <limits>
#include <utility>
#include <vector>

#include <fmt/format.h>

namespace koord::cgroup {

namespace {

using text::trim;

std::optional<std::int64_t> parseInt(std::string_view s) {
  return text::parseNumber<std::int64_t>(s);
}

struct Entry {
  Resource resource;
  ResourceFile v1;
  ResourceFile v2;
  bool writable;
};

// Writable entries first: the writer's allowlist is exactly these rows.
constexpr std::array<Entry, 18> kTable{{
    {Resource::kCpuShares, {"cpu", "cpu.shares"}, {"", "cpu.weight"}, true},
    {Resource::kCpuCfsQuota, {"cpu", "cpu.cfs_quota_us"}, {"", "cpu.max"}, true},
    {Resource::kCpuCfsPeriod, {"cpu", "cpu.cfs_period_us"}, {"", "cpu.max"}, true},
    {Resource::kCpuCfsBurst, {"cpu", "cpu.cfs_burst_us"}, {"", "cpu.max.burst"}, true},
    {Resource::kCpuIdle, {"cpu", "cpu.idle"}, {"", "cpu.idle"}, true},
    {Resource::kCpusetCpus, {"cpuset", "cpuset.cpus"}, {"", "cpuset.cpus"}, true},
    {Resource::kCpusetMems, {"cpuset", "cpuset.mems"}, {"", "cpuset.mems"}, true},
    {Resource::kMemoryLimit, {"memory", "memory.limit_in_bytes"}, {"", "memory.max"}, true},
    {Resource::kCpuStat, {"cpu", "cpu.stat"}, {"", "cpu.stat"}, false},
    {Resource::kCpuAcctUsage, {"cpuacct", "cpuacct.usage"}, {"", "cpu.stat"}, false},
    {Resource::kMemoryUsage, {"memory", "memory.usage_in_bytes"}, {"", "memory.current"}, false},
    {Resource::kMemoryStat, {"memory", "memory.stat"}, {"", "memory.stat"}, false},
    {Resource::kCgroupProcs, {"cpu", "cgroup.procs"}, {"", "cgroup.procs"}, false},
    {Resource::kCpuPressure, {"cpuacct", "cpu.pressure"}, {"", "cpu.pressure"}, false},
    {Resource::kMemoryPressure, {"cpuacct", "memory.pressure"}, {"", "memory.pressure"}, false},
    {Resource::kIOPressure, {"cpuacct", "io.pressure"}, {"", "io.pressure"}, false},
    {Resource::kCpuBvtWarpNs, {"cpu", "cpu.bvt_warp_ns"}, {"", "cpu.bvt_warp_ns"}, true},
    {Resource::kCgroupThreads, {"cpu", "tasks"}, {"", "cgroup.threads"}, false},
}};

const Entry& entryOf(Resource r) {
  for (const auto& e : kTable) {
    if (e.resource == r)
      return e;
  }
  return kTable.front();  // unreachable: every enumerator has a row
}

}  // namespace

ResourceFile resourceFile(Resource r, CgroupVersion v) {
  const auto& e = entryOf(r);
  return v == CgroupVersion::kV2 ? e.v2 : e.v1;
}

std::string_view resourceName(Resource r) {
  return entryOf(r).v1.file;
}

std::optional<Resource> resourceByFileName(std::string_view file_name) {
  for (const auto& e : kTable) {
    // tasks / cgroup.threads move threads when written: never reached by a name a caller hands in.
    if (e.resource == Resource::kCgroupThreads)
      continue;
    // cpu.max and cpu.stat name more than one row: the first (the writable one) answers.
    if (e.v1.file == file_name || e.v2.file == file_name)
      return e.resource;
  }
  return std::nullopt;
}

bool resourceWritable(Resource r) {
  return entryOf(r).writable;
}

Expected<std::string> validateValue(Resource r, std::string_view raw) {
  const auto value = trim(raw);
  auto bad = [&](std::string_view why) {
    return invalidArgument(
        fmt::format("{} value {:?}: {}", resourceName(r), std::string(raw), why));
  };
  if (!resourceWritable(r))
    return bad("not writable");
  auto inRange = [&](std::int64_t lo, std::int64_t hi) -> Expected<std::string> {
    auto v = parseInt(value);
    if (!v)
      return bad("not an integer");
    if (*v < lo || *v > hi)
      return bad(fmt::format("out of range [{}, {}]", lo, hi));
    return std::to_string(*v);
  };
  constexpr auto kMax = std::numeric_limits<std::int64_t>::max();
  switch (r) {
    case Resource::kCpuShares:
      return inRange(2, 262144);
    case Resource::kCpuCfsQuota: {
      if (value == "-1" || value == "max")
        return std::string("-1");
      return inRange(1000, kMax / 1000);
    }
    case Resource::kCpuCfsPeriod:
      return inRange(1000, 1000000);
    case Resource::kCpuCfsBurst:
      return inRange(0, kMax / 1000);
    case Resource::kCpuIdle:
      return inRange(0, 1);
    case Resource::kCpuBvtWarpNs:
      return inRange(-1, 2);
    case Resource::kMemoryLimit: {
      if (value == "-1" || value == "max")
        return std::string("-1");
      return inRange(1, kMax);
    }
    case Resource::kCpusetCpus:
    case Resource::kCpusetMems: {
      // Written in the form the kernel reads back ("0,1,2,3" -> "0-3"), so an unchanged set
      // compares equal.
      auto ids = parseCpuList(value);
      if (!ids || ids->empty())
        return bad(ids ? "empty" : ids.error().message);
      return formatCpuList(*ids);
    }
    default:
      return bad("not writable");
  }
}

std::int64_t sharesToWeight(std::int64_t shares) {
  if (shares < 2)
    shares = 2;
  if (shares > 262144)
    shares = 262144;
  return 1 + ((shares - 2) * 9999) / 262142;
}

std::int64_t weightToShares(std::int64_t weight) {
  if (weight < 1)
    weight = 1;
  if (weight > 10000)
    weight = 10000;
  // Rounded up, so that sharesToWeight(weightToShares(w)) == w.
  return 2 + ((weight - 1) * 262142 + 9998) / 9999;
}

}  // namespace koord::cgroup
