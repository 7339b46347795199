#include "qosmanager/resctrl/resctrl_policy.h"

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <algorithm>
#include <bit>
#include <charconv>
#include <limits>

#include <fmt/format.h>

#include "koord/kube/json_fields.h"
#include "qosmanager/framework/resource_qos_strategy.h"

namespace koord::roles::koordlet::qosmanager {

namespace json = boost::json;

namespace {

std::string_view trimSpace(std::string_view s) {
  constexpr std::string_view kSpace = " \t\r\n";
  auto first = s.find_first_not_of(kSpace);
  if (first == std::string_view::npos)
    return {};
  return s.substr(first, s.find_last_not_of(kSpace) - first + 1);
}

template <typename T>
std::optional<T> parseNumber(std::string_view s, int base) {
  s = trimSpace(s);
  T v{};
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v, base);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size())
    return std::nullopt;
  return v;
}

kube::Expected<ResctrlClassQOS> decodeClass(const json::object& strategy, std::string_view cls,
                                            std::int64_t default_end) {
  ResctrlClassQOS configured;
  configured.cat_end_percent = default_end;
  auto section = resourceQOSSection(strategy, cls, "resctrlQOS");
  if (!section)
    return section.error();
  if (const json::object* resctrl = section->object) {
    const std::string& path = section->path;
    auto enable = kube::jsonfields::boolField(*resctrl, "enable", path);
    if (!enable)
      return enable.error();
    configured.enable = *enable;
    auto start = boundedIntField(*resctrl, "catRangeStartPercent", path, 0, 100);
    if (!start)
      return start.error();
    auto end = boundedIntField(*resctrl, "catRangeEndPercent", path, 0, 100);
    if (!end)
      return end.error();
    auto mba = boundedIntField(*resctrl, "mbaPercent", path, 0, 100);
    if (!mba)
      return mba.error();
    configured.cat_start_percent = start->value_or(configured.cat_start_percent);
    configured.cat_end_percent = end->value_or(configured.cat_end_percent);
    configured.mba_percent = mba->value_or(configured.mba_percent);
    if (configured.cat_start_percent >= configured.cat_end_percent) {
      return kube::makeKubeError(
          fmt::format("{}: catRangeStartPercent ({}) must be below catRangeEndPercent ({})", path,
                      configured.cat_start_percent, configured.cat_end_percent));
    }
  }
  // Koordinator's mergeNoneResctrlQOSIfDisabled: a disabled class keeps the whole cache.
  if (!configured.enable)
    return ResctrlClassQOS{};
  return configured;
}

}  // namespace

std::string_view resctrlGroupName(ResctrlGroup g) {
  switch (g) {
    case ResctrlGroup::kLSR:
      return "LSR";
    case ResctrlGroup::kLS:
      return "LS";
    case ResctrlGroup::kBE:
      return "BE";
  }
  return "BE";
}

std::optional<ResctrlGroup> resctrlGroupOf(apis::QoSClass qos) {
  switch (qos) {
    case apis::QoSClass::kLSE:
    case apis::QoSClass::kLSR:
      return ResctrlGroup::kLSR;
    case apis::QoSClass::kLS:
      return ResctrlGroup::kLS;
    case apis::QoSClass::kBE:
      return ResctrlGroup::kBE;
    default:
      return std::nullopt;
  }
}

kube::Expected<ResctrlQOSStrategy> decodeResctrlQOSStrategy(const json::object& strategy) {
  ResctrlQOSStrategy out;
  const std::pair<ResctrlGroup, std::pair<std::string_view, std::int64_t>> classes[] = {
      {ResctrlGroup::kLSR, {"lsrClass", 100}},
      {ResctrlGroup::kLS, {"lsClass", 100}},
      {ResctrlGroup::kBE, {"beClass", 30}},
  };
  for (const auto& [group, spec] : classes) {
    auto c = decodeClass(strategy, spec.first, spec.second);
    if (!c)
      return c.error();
    out.groups[static_cast<std::size_t>(group)] = *c;
  }
  return out;
}

kube::Expected<std::uint64_t> parseCbmMask(std::string_view text) {
  auto cbm = parseNumber<std::uint64_t>(text, 16);
  if (!cbm)
    return kube::makeKubeError(fmt::format("cbm_mask {:?}: not a hex mask", std::string(text)));
  // The root's mask covers every way: all ones from bit 0.
  if (*cbm == 0 || (*cbm & (*cbm + 1)) != 0) {
    return kube::makeKubeError(
        fmt::format("cbm_mask {:x}: not a contiguous mask from bit 0", *cbm));
  }
  return *cbm;
}

kube::Expected<std::uint64_t> catL3Mask(std::uint64_t cbm, int min_cbm_bits,
                                        std::int64_t start_percent, std::int64_t end_percent) {
  if (cbm == 0 || (cbm & (cbm + 1)) != 0)
    return kube::makeKubeError(fmt::format("illegal cbm {:x}", cbm));
  if (start_percent < 0 || end_percent > 100 || end_percent <= start_percent) {
    return kube::makeKubeError(
        fmt::format("illegal l3 cat percent: start {}, end {}", start_percent, end_percent));
  }
  const std::int64_t ways = std::bit_width(cbm);
  const std::int64_t min_ways = std::max(min_cbm_bits, 1);
  if (ways < min_ways) {
    return kube::makeKubeError(
        fmt::format("cbm {:x} has {} ways, fewer than min_cbm_bits {}", cbm, ways, min_ways));
  }
  // ceil(ways * percent / 100) on integers: exact where Go's float64 Ceil is.
  std::int64_t start_way = (ways * start_percent + 99) / 100;
  std::int64_t end_way = (ways * end_percent + 99) / 100;
  if (end_way - start_way < min_ways) {
    end_way = std::min(ways, start_way + min_ways);
    start_way = end_way - min_ways;
  }
  const auto bits = [](std::int64_t n) -> std::uint64_t {
    return n >= 64 ? std::numeric_limits<std::uint64_t>::max() : (std::uint64_t{1} << n) - 1;
  };
  return bits(end_way) & ~bits(start_way);
}

CpuVendor cpuVendorOf(std::string_view vendor_id) {
  return trimSpace(vendor_id) == "AuthenticAMD" ? CpuVendor::kAMD : CpuVendor::kIntel;
}

std::optional<std::int64_t> mbaValue(std::int64_t percent, CpuVendor vendor) {
  if (percent <= 0 || percent > 100)
    return std::nullopt;
  if (vendor == CpuVendor::kAMD) {
    if (percent == 100)
      return 2048;
    // 25 GB/s x 8 x 0.8 = 160 in the kernel's 1/8 GB/s unit, truncated as Koordinator does.
    return 160 * percent / 100;
  }
  return (percent + 9) / 10 * 10;
}

kube::Expected<ResctrlSchemata> parseResctrlSchemata(std::string_view text) {
  ResctrlSchemata out;
  std::size_t line_no = 0;
  while (!text.empty()) {
    auto nl = text.find('\n');
    std::string_view line = trimSpace(text.substr(0, nl));
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    ++line_no;
    auto colon = line.find(':');
    if (line.empty() || colon == std::string_view::npos)
      continue;
    const std::string_view kind = trimSpace(line.substr(0, colon));
    const bool l3 = kind == "L3";
    if (!l3 && kind != "MB")
      continue;
    std::string_view rest = line.substr(colon + 1);
    while (!rest.empty()) {
      auto semi = rest.find(';');
      std::string_view entry = trimSpace(rest.substr(0, semi));
      rest = semi == std::string_view::npos ? std::string_view() : rest.substr(semi + 1);
      if (entry.empty())
        continue;
      auto bad = [&](std::string_view why) {
        return kube::makeKubeError(fmt::format("schemata line {} ({}): entry {:?}: {}", line_no,
                                               kind, std::string(entry), why));
      };
      auto eq = entry.find('=');
      if (eq == std::string_view::npos)
        return bad("not id=value");
      auto id = parseNumber<int>(entry.substr(0, eq), 10);
      if (!id || *id < 0 || *id >= kMaxCacheIds)
        return bad(fmt::format("cache id not in [0, {})", kMaxCacheIds));
      if (l3) {
        auto mask = parseNumber<std::uint64_t>(entry.substr(eq + 1), 16);
        if (!mask)
          return bad("not a hex mask");
        out.l3[*id] = *mask;
      } else {
        auto value = parseNumber<std::int64_t>(entry.substr(eq + 1), 10);
        if (!value)
          return bad("not a decimal value");
        out.mb[*id] = *value;
      }
    }
  }
  return out;
}

namespace {

template <typename V>
std::string formatLine(std::string_view kind, const std::vector<int>& ids, V value,
                       std::string_view spec) {
  std::string out(kind);
  out += ':';
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (i > 0)
      out += ';';
    out += fmt::format("{}=", ids[i]);
    out += fmt::format(fmt::runtime(spec), value);
  }
  return out;
}

template <typename Map, typename V>
bool matches(const Map& current, const std::vector<int>& ids, V value) {
  if (current.size() != ids.size())
    return false;
  for (int id : ids) {
    auto it = current.find(id);
    if (it == current.end() || it->second != value)
      return false;
  }
  return true;
}

}  // namespace

std::string formatL3Line(const std::vector<int>& ids, std::uint64_t mask) {
  return formatLine("L3", ids, mask, "{:x}");
}

std::string formatMBLine(const std::vector<int>& ids, std::int64_t value) {
  return formatLine("MB", ids, value, "{}");
}

bool l3Matches(const ResctrlSchemata& current, const std::vector<int>& ids, std::uint64_t mask) {
  return matches(current.l3, ids, mask);
}

bool mbMatches(const ResctrlSchemata& current, const std::vector<int>& ids, std::int64_t value) {
  return matches(current.mb, ids, value);
}

kube::Expected<std::vector<std::int32_t>> parseTaskIds(std::string_view text,
                                                       std::size_t max_count) {
  std::vector<std::int32_t> out;
  std::size_t line_no = 0;
  while (!text.empty()) {
    auto nl = text.find('\n');
    std::string_view line = trimSpace(text.substr(0, nl));
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    ++line_no;
    if (line.empty())
      continue;
    auto id = parseNumber<std::int32_t>(line, 10);
    if (!id || *id <= 0) {
      return kube::makeKubeError(
          fmt::format("line {}: {:?} is not a thread id", line_no, std::string(line)));
    }
    if (out.size() >= max_count)
      return kube::makeKubeError(fmt::format("more than {} thread ids", max_count));
    out.push_back(*id);
  }
  return out;
}

std::optional<int> monDomainCacheId(std::string_view dir_name) {
  constexpr std::string_view kPrefix = "mon_L3_";
  if (!dir_name.starts_with(kPrefix))
    return std::nullopt;
  auto id = parseNumber<int>(dir_name.substr(kPrefix.size()), 10);
  if (!id || *id < 0 || *id >= kMaxCacheIds)
    return std::nullopt;
  return id;
}

}  // namespace koord::roles::koordlet::qosmanager
