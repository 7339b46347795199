#include "qosmanager/resctrl/resctrl_collector.h"

#include <algorithm>
#include <charconv>
#include <system_error>
#include <utility>

#include <fmt/format.h>

#include "qosmanager/sysreconcile/kernel_file.h"

namespace koord::roles::koordlet::qosmanager {

namespace fs = std::filesystem;

namespace {

// A counter file: absent or "Unavailable" is nullopt.
kube::Expected<std::optional<std::uint64_t>> readCounter(const fs::path& path) {
  auto text = readKernelFile(path);
  if (!text)
    return text.error();
  if (!*text)
    return std::optional<std::uint64_t>();
  const auto t = trimKernelText(**text);
  if (t == "Unavailable")
    return std::optional<std::uint64_t>();
  std::uint64_t v = 0;
  auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (t.empty() || ec != std::errc() || end != t.data() + t.size())
    return kube::makeKubeError(
        fmt::format("{}: {:?} is not a counter", path.string(), std::string(t)));
  return std::optional<std::uint64_t>(v);
}

}  // namespace

kube::Expected<std::vector<ResctrlMonSample>> readResctrlMonData(const fs::path& root) {
  std::vector<ResctrlMonSample> out;
  for (auto g : kResctrlGroups) {
    const fs::path mon = root / resctrlGroupName(g) / "mon_data";
    std::error_code ec;
    fs::directory_iterator it(mon, ec);
    if (ec)
      continue;
    std::vector<std::pair<int, fs::path>> domains;
    for (; it != fs::directory_iterator(); it.increment(ec)) {
      if (ec)
        break;
      auto id = monDomainCacheId(it->path().filename().string());
      if (!id)
        continue;
      if (domains.size() >= static_cast<std::size_t>(kMaxCacheIds))
        return kube::makeKubeError(
            fmt::format("{}: more than {} L3 domains", mon.string(), kMaxCacheIds));
      domains.emplace_back(*id, it->path());
    }
    std::sort(domains.begin(), domains.end());
    for (const auto& [id, dir] : domains) {
      ResctrlMonSample s;
      s.group = g;
      s.cache_id = id;
      const std::pair<const char*, std::optional<std::uint64_t>*> counters[] = {
          {"llc_occupancy", &s.llc_occupancy_bytes},
          {"mbm_total_bytes", &s.mbm_total_bytes},
          {"mbm_local_bytes", &s.mbm_local_bytes},
      };
      for (const auto& [name, target] : counters) {
        auto v = readCounter(dir / name);
        if (!v)
          return v.error();
        *target = *v;
      }
      out.push_back(s);
    }
  }
  return out;
}

ResctrlMetrics::ResctrlMetrics(metrics::Registry& registry, std::string node_name)
    : node_(std::move(node_name)),
      llc_(registry.gauge("koordlet_resctrl_llc_occupancy",
                          "resctrl default qos(LSR, LS, BE) llc occupancy collected by koordlet",
                          {"node", "cache_id", "qos"})),
      mb_(registry.gauge("koordlet_resctrl_memory_bandwidth",
                         "resctrl default qos(LSR, LS, BE) memory bandwidth collected by koordlet",
                         {"node", "cache_id", "qos", "mb_type"})) {}

void ResctrlMetrics::update(const std::vector<ResctrlMonSample>& samples) {
  std::set<metrics::LabelValues> llc_now;
  std::set<metrics::LabelValues> mb_now;
  for (const auto& s : samples) {
    const std::string id = std::to_string(s.cache_id);
    const std::string qos(resctrlGroupName(s.group));
    if (s.llc_occupancy_bytes) {
      metrics::LabelValues labels{node_, id, qos};
      llc_.with(labels).set(static_cast<double>(*s.llc_occupancy_bytes));
      llc_now.insert(std::move(labels));
    }
    const std::pair<const char*, const std::optional<std::uint64_t>*> mbs[] = {
        {"mbm_total_bytes", &s.mbm_total_bytes}, {"mbm_local_bytes", &s.mbm_local_bytes}};
    for (const auto& [type, value] : mbs) {
      if (!*value)
        continue;
      metrics::LabelValues labels{node_, id, qos, type};
      mb_.with(labels).set(static_cast<double>(**value));
      mb_now.insert(std::move(labels));
    }
  }
  for (const auto& labels : llc_published_) {
    if (!llc_now.contains(labels))
      llc_.remove(labels);
  }
  for (const auto& labels : mb_published_) {
    if (!mb_now.contains(labels))
      mb_.remove(labels);
  }
  llc_published_ = std::move(llc_now);
  mb_published_ = std::move(mb_now);
}

}  // namespace koord::roles::koordlet::qosmanager
