#include <array>
#include <charconv>
#include <string>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include "koord/cgroup/kubepods_path.h"
#include "koord/cgroup/resource_executor.h"
#include "koord/core/log.h"
#include "koordlet_options.h"
#include "metriccache/metric_cache.h"
#include "metricsadvisor/collectors/pagecache/page_cache_collector_spec.h"
#include "metricsadvisor/resource_collector.h"
#include "statesinformer/states_snapshot.h"

namespace koord::roles::koordlet::metricsadvisor {

namespace {

namespace mc = metriccache;

constexpr std::array<std::string_view, 5> kKeys{"inactive_anon", "active_anon", "unevictable",
                                                "active_file", "inactive_file"};

class PageCacheCollector final : public Collector {
 public:
  explicit PageCacheCollector(const CollectorContext& context)
      : cgroups_(context.cgroups), cache_(context.cache) {}

  void collect(const StatesSnapshot& states, std::chrono::system_clock::time_point now,
               std::chrono::steady_clock::time_point) override {
    if (!states.synced || states.pods == nullptr)
      return;
    ++round_;
    samples_.clear();
    const auto driver = cgroups_.root().driver;
    for (const PodMeta& pod : *states.pods) {
      auto& [uid, st] = touch(pods_, pod.uid);
      auto dir = podCgroupDir(driver, pod);
      if (!dir) {
        logError(st, nameOf(pod, nullptr), dir.error().message);
        continue;
      }
      if (!read(st, uid, mc::MetricKind::kPodMemoryWithPageCacheUsage, *dir, pod, nullptr, now))
        continue;
      for (const ContainerMeta& c : pod.containers) {
        if (c.id.empty())
          continue;
        auto& [id, cst] = touch(containers_, c.id);
        auto cdir = cgroup::containerDir(driver, *dir, c.runtime, c.id);
        if (!cdir) {
          logError(cst, nameOf(pod, &c), cdir.error().message);
          continue;
        }
        read(cst, id, mc::MetricKind::kContainerMemoryWithPageCacheUsage, *cdir, pod, &c, now);
      }
    }
    if (!samples_.empty()) {
      const auto summary = cache_.appendAll(samples_);
      if (summary.rejected > 0) {
        KOORD_VLOG(4, "page cache collector: {} samples refused by the metric cache",
                   summary.rejected);
      }
    }
    sweep(pods_, mc::MetricKind::kPodMemoryWithPageCacheUsage);
    sweep(containers_, mc::MetricKind::kContainerMemoryWithPageCacheUsage);
  }

 private:
  struct Entry {
    std::uint64_t round = 0;
    std::string error;
  };
  using Entries = std::unordered_map<std::string, Entry>;

  Entries::value_type& touch(Entries& entries, const std::string& key) {
    auto& entry = *entries.try_emplace(key).first;
    entry.second.round = round_;
    return entry;
  }

  static std::string nameOf(const PodMeta& pod, const ContainerMeta* c) {
    return c == nullptr ? pod.key() : pod.key() + "/" + c->name;
  }

  static void logError(Entry& e, std::string_view key, const std::string& message) {
    if (e.error != message) {
      KOORD_LOG_WARNING("page cache collector: {}: {}", key, message);
      e.error = message;
    }
  }

  // As Koordinator: only a pod that should have a cgroup (Running, Pending) is worth a warning.
  static void failed(Entry& e, const PodMeta& pod, const ContainerMeta* c,
                     const std::string& message) {
    if (pod.phase == PodPhase::kRunning || pod.phase == PodPhase::kPending)
      logError(e, nameOf(pod, c), message);
  }

  // `key` borrows the map's own key, which outlives the round's samples; `c` is null for the pod.
  bool read(Entry& e, std::string_view key, mc::MetricKind kind, const std::string& dir,
            const PodMeta& pod, const ContainerMeta* c, mc::TimePoint now) {
    auto text = cgroups_.read(dir, cgroup::Resource::kMemoryStat);
    if (!text) {
      failed(e, pod, c, text.error().message);
      return false;
    }
    auto bytes = memoryUsageWithPageCache(*text, cgroups_.root().version);
    if (!bytes) {
      failed(e, pod, c,
             fmt::format("{}: {}", cgroups_.pathOf(dir, cgroup::Resource::kMemoryStat).string(),
                         bytes.error().message));
      return false;
    }
    e.error.clear();
    samples_.push_back({kind, key, now, static_cast<double>(*bytes)});
    return true;
  }

  void sweep(Entries& entries, mc::MetricKind kind) {
    for (auto it = entries.begin(); it != entries.end();) {
      if (it->second.round == round_) {
        ++it;
        continue;
      }
      cache_.removeSeries(kind, it->first);
      it = entries.erase(it);
    }
  }

  const cgroup::ResourceExecutor& cgroups_;
  mc::MetricCache& cache_;
  Entries pods_;        // by pod UID
  Entries containers_;  // by container ID
  std::vector<mc::Sample> samples_;
  std::uint64_t round_ = 0;
};

}  // namespace

kube::Expected<std::uint64_t> memoryUsageWithPageCache(std::string_view memory_stat,
                                                       cgroup::CgroupVersion version) {
  const std::string_view prefix = version == cgroup::CgroupVersion::kV1 ? "total_" : "";
  std::array<bool, kKeys.size()> seen{};
  std::uint64_t sum = 0;
  while (!memory_stat.empty()) {
    const auto nl = memory_stat.find('\n');
    const auto line = memory_stat.substr(0, nl);
    memory_stat = nl == std::string_view::npos ? std::string_view{} : memory_stat.substr(nl + 1);
    const auto space = line.find(' ');
    if (space == std::string_view::npos || line.substr(0, prefix.size()) != prefix)
      continue;
    const auto name = line.substr(prefix.size(), space - prefix.size());
    for (std::size_t i = 0; i < kKeys.size(); ++i) {
      if (name != kKeys[i])
        continue;
      const auto value = line.substr(space + 1);
      std::uint64_t v = 0;
      const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
      if (ec != std::errc() || end != value.data() + value.size() || seen[i])
        return invalidArgument(
            fmt::format("memory.stat line {:?} is not a single \"key value\"", std::string(line)));
      seen[i] = true;
      sum += v;
    }
  }
  for (std::size_t i = 0; i < kKeys.size(); ++i) {
    if (!seen[i])
      return invalidArgument(fmt::format("memory.stat has no {}{}", prefix, kKeys[i]));
  }
  return sum;
}

CollectorSpec pageCacheCollector() {
  return {.name = "page cache collector",
          .gate = "",
          .interval = [](const KoordletOptions& o) { return o.collect_res_used_interval; },
          .make = makeCollector<PageCacheCollector>,
          .wanted = [](const KoordletOptions& o) { return o.enable_pagecache_collector; }};
}

}  // namespace koord::roles::koordlet::metricsadvisor
