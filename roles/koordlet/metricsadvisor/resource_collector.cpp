#include "metricsadvisor/resource_collector.h"

#include <fmt/format.h>

#include "koord/cgroup/cgroup_reader.h"
#include "koord/cgroup/proc_readers.h"
#include "koord/cgroup/resource_executor.h"
#include "koord/core/log.h"

namespace koord::roles::koordlet {

namespace mc = metriccache;

cgroup::QoSTier qosTierOf(apis::KubeQoS q) {
  switch (q) {
    case apis::KubeQoS::kGuaranteed:
      return cgroup::QoSTier::kGuaranteed;
    case apis::KubeQoS::kBurstable:
      return cgroup::QoSTier::kBurstable;
    default:
      return cgroup::QoSTier::kBestEffort;
  }
}

kube::Expected<std::string> podCgroupDir(cgroup::CgroupDriver driver, const PodMeta& pod) {
  return cgroup::podDir(driver, qosTierOf(pod.kube_qos), pod.uid);
}

ResourceCollector::ResourceCollector(const cgroup::ResourceExecutor& cgroups,
                                     std::filesystem::path proc_root, mc::MetricCache& cache)
    : cgroups_(cgroups), proc_root_(std::move(proc_root)), cache_(cache) {}

std::optional<double> ResourceCollector::rate(std::unordered_map<std::string, Counter>& counters,
                                              const std::string& key, std::uint64_t nanos,
                                              std::chrono::steady_clock::time_point at) {
  auto [it, inserted] = counters.try_emplace(key, Counter{nanos, at});
  if (inserted)
    return std::nullopt;
  Counter prev = it->second;
  it->second = Counter{nanos, at};
  auto dt = std::chrono::duration<double, std::nano>(at - prev.at).count();
  if (nanos < prev.value || dt <= 0)
    return std::nullopt;
  return static_cast<double>(nanos - prev.value) / dt;
}

void ResourceCollector::logOnce(const std::string& key, const std::string& message) {
  auto& last = logged_errors_[key];
  if (last != message) {
    KOORD_LOG_WARNING("metrics advisor: {}: {}", key, message);
    last = message;
  }
}

// BE usage from the besteffort QoS cgroup (every BestEffort pod's processes are under it), BE
// request from the BE pods' batch-cpu requests, and BE real limit from what the cgroup allows:
// its cpuset size, or its CFS quota when that is smaller.
template <typename Add>
void ResourceCollector::collectBE(const std::vector<PodMeta>& pods,
                                  std::chrono::steady_clock::time_point steady_now, Add& add) {
  const auto be = cgroup::qosTierDir(cgroups_.root().driver, cgroup::QoSTier::kBestEffort);
  if (auto usage = cgroup::readCpuUsageNanos(cgroups_, be)) {
    if (auto cores = rate(tier_cpu_, "besteffort", *usage, steady_now))
      add(metriccache::MetricKind::kBECPUUsage, "", *cores);
  }
  double request_milli = 0;
  for (const auto& pod : pods) {
    if (apis::podQoSClassRaw(pod.labels) != apis::QoSClass::kBE ||
        (pod.phase != PodPhase::kRunning && pod.phase != PodPhase::kPending))
      continue;
    for (const auto& c : pod.containers) {
      auto it = c.requests.find("kubernetes.io/batch-cpu");
      if (it != c.requests.end() && it->second.value() > 0)
        request_milli += static_cast<double>(it->second.value());
    }
  }
  add(metriccache::MetricKind::kBECPURequest, "", request_milli / 1000);
  std::optional<double> limit;
  if (auto cpus = cgroup::readCpuSet(cgroups_, be); cpus && !cpus->empty())
    limit = static_cast<double>(cpus->size());
  auto quota = cgroup::readInt64(cgroups_, be, cgroup::Resource::kCpuCfsQuota);
  auto period = cgroup::readInt64(cgroups_, be, cgroup::Resource::kCpuCfsPeriod);
  if (quota && period && *quota > 0 && *period > 0) {
    const double cores = static_cast<double>(*quota) / static_cast<double>(*period);
    if (!limit || cores < *limit)
      limit = cores;
  }
  if (limit)
    add(metriccache::MetricKind::kBECPULimit, "", *limit);
}

// Each app's cgroup read like a pod's. An app whose cgroup cannot be read is not running (or
// its path is wrong): it counts as using nothing and its rate starts afresh when it is back.
template <typename Add>
ResourceCollector::HostAppsUsage ResourceCollector::collectHostApps(
    const HostApplications& host_apps, std::chrono::steady_clock::time_point steady_now, Add& add,
    CollectStats& stats) {
  HostAppsUsage usage;
  std::unordered_map<std::string, std::string> errors;  // this round's, by key
  for (const auto& skipped : host_apps.skipped)
    errors.try_emplace(skipped.key, skipped.reason);
  std::unordered_set<std::string> listed;
  for (const auto& app : host_apps.apps) {
    listed.insert(app.name);
    const auto dir = hostAppCgroupDir(cgroups_.root().driver, app);
    auto cpu = cgroup::readCpuUsageNanos(cgroups_, dir);
    auto mem = cgroup::readMemoryUsageBytes(cgroups_, dir);
    if (!cpu || !mem) {
      ++stats.errors;
      errors[app.name] = !cpu ? cpu.error().message : mem.error().message;
      host_app_cpu_.erase(app.name);
      continue;
    }
    ++stats.host_apps_collected;
    host_app_series_.insert(app.name);
    if (auto cores = rate(host_app_cpu_, app.name, *cpu, steady_now)) {
      add(mc::MetricKind::kHostAppCPUUsage, app.name, *cores);
      usage.cpu += *cores;
    } else {
      usage.all_cpu = false;
    }
    add(mc::MetricKind::kHostAppMemoryUsage, app.name, static_cast<double>(*mem));
    usage.memory += static_cast<double>(*mem);
  }
  for (const auto& [key, message] : errors) {
    auto& last = host_app_errors_[key];
    if (last != message)
      KOORD_LOG_ERROR("metrics advisor: host application {}: {}", key, message);
    last = message;
  }
  std::erase_if(host_app_errors_, [&](const auto& e) { return errors.count(e.first) == 0; });
  for (auto it = host_app_series_.begin(); it != host_app_series_.end();) {
    if (listed.count(*it) == 0) {
      // Only the host-app kinds: the name could equal some other object's key.
      cache_.removeSeries(mc::MetricKind::kHostAppCPUUsage, *it);
      cache_.removeSeries(mc::MetricKind::kHostAppMemoryUsage, *it);
      host_app_cpu_.erase(*it);
      it = host_app_series_.erase(it);
    } else {
      ++it;
    }
  }
  return usage;
}

CollectStats ResourceCollector::collect(const std::vector<PodMeta>& pods, mc::TimePoint now,
                                        std::chrono::steady_clock::time_point steady_now) {
  return collect(pods, HostApplications{}, now, steady_now);
}

CollectStats ResourceCollector::collect(const std::vector<PodMeta>& pods,
                                        const HostApplications& host_apps, mc::TimePoint now,
                                        std::chrono::steady_clock::time_point steady_now) {
  CollectStats stats;
  std::vector<mc::Sample> samples;
  std::vector<std::string> keys;  // owns the keys the samples borrow
  keys.reserve(pods.size() * 8 + host_apps.apps.size() * 2 + 4);
  auto add = [&](mc::MetricKind kind, std::string key, double value) {
    keys.push_back(std::move(key));
    samples.push_back({kind, {}, now, value});
  };

  // Node.
  std::optional<double> node_cpu;
  std::optional<double> node_memory;
  if (auto stat = cgroup::readProcStat(proc_root_)) {
    auto busy = stat->total.busy();
    if (have_node_ticks_ && busy >= node_busy_ticks_) {
      auto dt = std::chrono::duration<double>(steady_now - node_ticks_at_).count();
      if (dt > 0) {
        node_cpu = static_cast<double>(busy - node_busy_ticks_) /
                   static_cast<double>(cgroup::clockTicksPerSecond()) / dt;
      }
    }
    have_node_ticks_ = true;
    node_busy_ticks_ = busy;
    node_ticks_at_ = steady_now;
  } else {
    ++stats.errors;
    logOnce("node", stat.error().message);
  }
  if (auto mem = cgroup::readMemInfo(proc_root_)) {
    node_memory = static_cast<double>(mem->usageWithoutPageCache());
    add(mc::MetricKind::kNodeMemoryUsage, "", *node_memory);
    add(mc::MetricKind::kNodeMemoryWithPageCacheUsage, "",
        static_cast<double>(mem->usageWithPageCache()));
  } else {
    ++stats.errors;
    logOnce("node memory", mem.error().message);
  }
  if (node_cpu)
    add(mc::MetricKind::kNodeCPUUsage, "", *node_cpu);

  // Pods and containers.
  double pods_cpu = 0, pods_memory = 0;
  bool all_pods_cpu = true;
  std::unordered_set<std::string> live_pods, live_containers;
  const auto driver = cgroups_.root().driver;
  for (const auto& pod : pods) {
    if (pod.phase != PodPhase::kRunning && pod.phase != PodPhase::kPending)
      continue;
    auto dir = podCgroupDir(driver, pod);
    if (!dir) {
      ++stats.errors;
      logOnce(pod.key(), dir.error().message);
      continue;
    }
    live_pods.insert(pod.uid);
    auto cpu = cgroup::readCpuUsageNanos(cgroups_, *dir);
    auto mem = cgroup::readMemoryUsageBytes(cgroups_, *dir);
    if (!cpu || !mem) {
      // A pod whose cgroup is not there yet (Pending) or already gone is not an error to shout.
      if (pod.phase == PodPhase::kRunning) {
        ++stats.errors;
        logOnce(pod.key(), !cpu ? cpu.error().message : mem.error().message);
      }
      all_pods_cpu = false;
      continue;
    }
    logged_errors_.erase(pod.key());
    ++stats.pods_collected;
    auto cores = rate(pod_cpu_, pod.uid, *cpu, steady_now);
    if (cores) {
      add(mc::MetricKind::kPodCPUUsage, pod.uid, *cores);
      pods_cpu += *cores;
    } else {
      all_pods_cpu = false;
    }
    add(mc::MetricKind::kPodMemoryUsage, pod.uid, static_cast<double>(*mem));
    pods_memory += static_cast<double>(*mem);

    for (const auto& c : pod.containers) {
      if (c.id.empty())
        continue;
      auto cdir = cgroup::containerDir(driver, *dir, c.runtime, c.id);
      if (!cdir)
        continue;
      auto ccpu = cgroup::readCpuUsageNanos(cgroups_, *cdir);
      auto cmem = cgroup::readMemoryUsageBytes(cgroups_, *cdir);
      if (!ccpu || !cmem)
        continue;
      live_containers.insert(c.id);
      ++stats.containers_collected;
      if (auto ccores = rate(container_cpu_, c.id, *ccpu, steady_now))
        add(mc::MetricKind::kContainerCPUUsage, c.id, *ccores);
      add(mc::MetricKind::kContainerMemoryUsage, c.id, static_cast<double>(*cmem));
    }
  }
  collectBE(pods, steady_now, add);
  const auto apps = collectHostApps(host_apps, steady_now, add, stats);
  // System usage = node - pods - host applications, never negative; only when every pod and
  // every app read had a CPU rate this round, or their share would be under-counted. Each app is
  // subtracted once: the pods are summed per pod cgroup, so even an app under kubepods/besteffort
  // is in no pod's sum.
  if (node_cpu && all_pods_cpu && apps.all_cpu)
    add(mc::MetricKind::kSystemCPUUsage, "", std::max(0.0, *node_cpu - pods_cpu - apps.cpu));
  if (node_memory)
    add(mc::MetricKind::kSystemMemoryUsage, "",
        std::max(0.0, *node_memory - pods_memory - apps.memory));

  for (std::size_t i = 0; i < samples.size(); ++i)
    samples[i].key = keys[i];
  auto summary = cache_.appendAll(samples);
  if (summary.rejected > 0)
    KOORD_VLOG(4, "metrics advisor: {} samples refused by the metric cache", summary.rejected);

  // Forget pods and containers that left the node.
  for (auto it = pod_cpu_.begin(); it != pod_cpu_.end();) {
    if (live_pods.count(it->first) == 0) {
      cache_.removeObject(it->first);
      it = pod_cpu_.erase(it);
    } else {
      ++it;
    }
  }
  for (auto it = container_cpu_.begin(); it != container_cpu_.end();) {
    if (live_containers.count(it->first) == 0) {
      cache_.removeObject(it->first);
      it = container_cpu_.erase(it);
    } else {
      ++it;
    }
  }
  return stats;
}

}  // namespace koord::roles::koordlet
