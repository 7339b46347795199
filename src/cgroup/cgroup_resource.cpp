#include "koord/cgroup/cgroup_resource.h"
#include "koord/cgroup/cpu_topology.h"
#include "text_fields.h"

#include <algorithm>
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
constexpr std::array<Entry, 34> kTable{{
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
    {Resource::kMemoryMin, {"memory", "memory.min"}, {"", "memory.min"}, true},
    {Resource::kMemoryLow, {"memory", "memory.low"}, {"", "memory.low"}, true},
    {Resource::kMemoryHigh, {"memory", "memory.high"}, {"", "memory.high"}, true},
    {Resource::kMemoryWmarkRatio,
     {"memory", "memory.wmark_ratio"},
     {"", "memory.wmark_ratio"},
     true},
    {Resource::kMemoryWmarkScaleFactor,
     {"memory", "memory.wmark_scale_factor"},
     {"", "memory.wmark_scale_factor"},
     true},
    {Resource::kMemoryWmarkMinAdj,
     {"memory", "memory.wmark_min_adj"},
     {"", "memory.wmark_min_adj"},
     true},
    {Resource::kMemoryPriority, {"memory", "memory.priority"}, {"", "memory.priority"}, true},
    {Resource::kMemoryUsePriorityOom,
     {"memory", "memory.use_priority_oom"},
     {"", "memory.use_priority_oom"},
     true},
    {Resource::kMemoryOomGroup, {"memory", "memory.oom.group"}, {"", "memory.oom.group"}, true},
    {Resource::kBlkioReadBps, {"blkio", "blkio.throttle.read_bps_device"}, {"", "io.max"}, true},
    {Resource::kBlkioWriteBps, {"blkio", "blkio.throttle.write_bps_device"}, {"", "io.max"}, true},
    {Resource::kBlkioReadIops, {"blkio", "blkio.throttle.read_iops_device"}, {"", "io.max"}, true},
    {Resource::kBlkioWriteIops,
     {"blkio", "blkio.throttle.write_iops_device"},
     {"", "io.max"},
     true},
    {Resource::kBlkioWeight, {"blkio", "blkio.cost.weight"}, {"", "io.weight"}, true},
    {Resource::kBlkioCostQos, {"blkio", "blkio.cost.qos"}, {"", "io.cost.qos"}, true},
    {Resource::kBlkioCostModel, {"blkio", "blkio.cost.model"}, {"", "io.cost.model"}, true},
}};

// A device number as the kernel prints it: a 12-bit major, ':', a 20-bit minor.
bool validDeviceNumber(std::string_view s) {
  const auto colon = s.find(':');
  if (colon == std::string_view::npos)
    return false;
  auto major = text::parseNumber<std::uint32_t>(s.substr(0, colon));
  auto minor = text::parseNumber<std::uint32_t>(s.substr(colon + 1));
  return major && minor && *major < (1u << 12) && *minor < (1u << 20);
}

std::vector<std::string_view> blankSeparated(std::string_view s) {
  std::vector<std::string_view> out;
  constexpr std::string_view kSpace = " \t\r\n";
  while (true) {
    const auto first = s.find_first_not_of(kSpace);
    if (first == std::string_view::npos)
      return out;
    s.remove_prefix(first);
    const auto end = s.find_first_of(kSpace);
    out.push_back(s.substr(0, end));
    if (end == std::string_view::npos)
      return out;
    s.remove_prefix(end);
  }
}

// One key=value of blkio.cost.qos / io.cost.qos or blkio.cost.model / io.cost.model, checked
// against the keys koord writes; the reason when refused.
std::string checkCostToken(Resource r, std::string_view key, std::string_view v) {
  constexpr auto kMax = std::numeric_limits<std::int64_t>::max();
  auto number = [&](std::int64_t lo, std::int64_t hi) -> std::string {
    auto n = text::parseNumber<std::int64_t>(v);
    if (!n || *n < lo || *n > hi)
      return fmt::format("{} must be an integer in [{}, {}]", key, lo, hi);
    return "";
  };
  if (key == "ctrl")
    return v == "auto" || v == "user" ? "" : "ctrl must be auto or user";
  if (r == Resource::kBlkioCostQos) {
    if (key == "enable")
      return number(0, 1);
    if (key == "rpct" || key == "wpct")
      return number(0, 100);
    if (key == "rlat" || key == "wlat")
      return number(0, kMax);
  } else {
    if (key == "model")
      return v == "linear" ? "" : "model must be linear";
    if (key == "rbps" || key == "rseqiops" || key == "rrandiops" || key == "wbps" ||
        key == "wseqiops" || key == "wrandiops")
      return number(1, kMax);
  }
  return fmt::format("unknown key {:?}", std::string(key));
}

// "MAJ:MIN <setting>" for the block I/O rows, normalized to single spaces; the error's message
// is the reason.
Expected<std::string> checkBlkioValue(Resource r, std::string_view value) {
  constexpr auto kMax = std::numeric_limits<std::int64_t>::max();
  const auto tokens = blankSeparated(value);
  if (tokens.size() < 2 || tokens.size() > 16 || !validDeviceNumber(tokens[0]))
    return invalidArgument("want \"MAJ:MIN <setting>\"");
  std::string out(tokens[0]);
  auto single = [&](std::int64_t lo, std::int64_t hi) -> Expected<std::string> {
    auto n = tokens.size() == 2 ? text::parseNumber<std::int64_t>(tokens[1]) : std::nullopt;
    if (!n || *n < lo || *n > hi)
      return invalidArgument(fmt::format("want \"MAJ:MIN N\" with N in [{}, {}]", lo, hi));
    return fmt::format("{} {}", out, *n);
  };
  switch (r) {
    case Resource::kBlkioReadBps:
    case Resource::kBlkioWriteBps:
    case Resource::kBlkioReadIops:
    case Resource::kBlkioWriteIops: {
      const auto eq = tokens.size() == 2 ? tokens[1].find('=') : std::string_view::npos;
      if (eq == std::string_view::npos)
        return single(0, kMax);
      // io.max's form: this row's key only, "max" for no limit.
      const auto key = tokens[1].substr(0, eq);
      const auto v = tokens[1].substr(eq + 1);
      if (key != ioMaxKey(r))
        return invalidArgument(fmt::format("io.max key must be {}", ioMaxKey(r)));
      auto n = text::parseNumber<std::int64_t>(v);
      if (v != "max" && (!n || *n < 1))
        return invalidArgument(fmt::format("{} must be max or an integer >= 1", key));
      return fmt::format("{} {}", out, tokens[1]);
    }
    case Resource::kBlkioWeight:
      return single(1, 100);
    default: {
      std::vector<std::string_view> seen;
      for (std::size_t i = 1; i < tokens.size(); ++i) {
        const auto eq = tokens[i].find('=');
        if (eq == std::string_view::npos)
          return invalidArgument(fmt::format("{:?} is not key=value", std::string(tokens[i])));
        const auto key = tokens[i].substr(0, eq);
        if (std::find(seen.begin(), seen.end(), key) != seen.end())
          return invalidArgument(fmt::format("key {} given twice", key));
        seen.push_back(key);
        if (auto why = checkCostToken(r, key, tokens[i].substr(eq + 1)); !why.empty())
          return invalidArgument(why);
        out += fmt::format(" {}", tokens[i]);
      }
      return out;
    }
  }
}

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
    case Resource::kMemoryMin:
    case Resource::kMemoryLow:
    case Resource::kMemoryHigh: {
      // Bytes, or "max" (the kernel's unlimited, which it also prints back).
      if (value == "-1" || value == "max")
        return std::string("max");
      return inRange(0, kMax);
    }
    case Resource::kMemoryWmarkRatio:
      return inRange(0, 100);
    case Resource::kMemoryWmarkScaleFactor:
      return inRange(1, 1000);
    case Resource::kMemoryWmarkMinAdj:
      return inRange(-25, 50);
    case Resource::kMemoryPriority:
      return inRange(0, 12);
    case Resource::kMemoryUsePriorityOom:
    case Resource::kMemoryOomGroup:
      return inRange(0, 1);
    case Resource::kBlkioReadBps:
    case Resource::kBlkioWriteBps:
    case Resource::kBlkioReadIops:
    case Resource::kBlkioWriteIops:
    case Resource::kBlkioWeight:
    case Resource::kBlkioCostQos:
    case Resource::kBlkioCostModel: {
      auto checked = checkBlkioValue(r, value);
      if (!checked)
        return bad(checked.error().message);
      return checked;
    }
    default:
      return bad("not writable");
  }
}

std::string_view ioMaxKey(Resource r) {
  switch (r) {
    case Resource::kBlkioReadBps:
      return "rbps";
    case Resource::kBlkioWriteBps:
      return "wbps";
    case Resource::kBlkioReadIops:
      return "riops";
    case Resource::kBlkioWriteIops:
      return "wiops";
    default:
      return "";
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
