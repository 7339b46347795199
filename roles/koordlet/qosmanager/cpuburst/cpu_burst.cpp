#include "qosmanager/cpuburst/cpu_burst.h"

#include <boost/json/object.hpp>

#include <algorithm>
#include <filesystem>
#include <random>
#include <utility>

#include <fmt/format.h>

#include "koord/apis/extension.h"
#include "koord/cgroup/cgroup_reader.h"
#include "koord/cgroup/cpu_topology.h"
#include "koord/cgroup/kubepods_path.h"
#include "koord/cgroup/resource_executor.h"
#include "koord/core/log.h"
#include "metriccache/metric_cache.h"
#include "metricsadvisor/resource_collector.h"
#include "statesinformer/states_snapshot.h"

namespace koord::roles::koordlet::qosmanager {

namespace mc = metriccache;
using cgroup::Resource;
using TimePoint = std::chrono::system_clock::time_point;

namespace {

// The most failures one round lists in its log line; the rest are counted.
constexpr std::size_t kMaxReportedErrors = 8;

std::int64_t cpuMilliOf(const kube::ResourceList& list) {
  // Not find() on an empty map: libstdc++ then treats the map's header as a node of Quantity's
  // 16-byte alignment, which UBSan reports when the map sits at 8 mod 16.
  if (list.empty())
    return 0;
  auto it = list.find(std::string_view("cpu"));
  return it == list.end() ? 0 : it->second.milliValue();
}

// Koordinator's IsPodCPUBurstable: every pod but those labelled LSE, LSR or BE, and of those only
// the ones whose containers may be running.
bool burstable(const PodMeta& pod) {
  const auto qos = apis::podQoSClassRaw(pod.labels);
  if (qos == apis::QoSClass::kLSE || qos == apis::QoSClass::kLSR || qos == apis::QoSClass::kBE)
    return false;
  return pod.phase == PodPhase::kRunning || pod.phase == PodPhase::kPending;
}

std::optional<std::string_view> annotationOf(const PodMeta& pod, std::string_view key) {
  if (pod.annotations.empty())
    return std::nullopt;
  auto it = pod.annotations.find(key);
  if (it == pod.annotations.end())
    return std::nullopt;
  return std::string_view(it->second);
}

std::string containerKey(const PodMeta& pod, const ContainerMeta& c) {
  return pod.key() + "/" + c.name;
}

double randomBelowHalf() {
  static thread_local std::mt19937_64 gen{std::random_device{}()};
  return std::uniform_real_distribution<double>(0.0, 0.5)(gen);
}

}  // namespace

CPUBurst::CPUBurst(const mc::MetricCache& cache, cgroup::ResourceExecutor& cgroups,
                   const cgroup::CpuTopology& topology, CPUBurstOptions options)
    : cache_(cache), cgroups_(cgroups), topology_(topology), options_(std::move(options)) {
  if (!options_.limiter_init_ratio)
    options_.limiter_init_ratio = randomBelowHalf;
}

CPUBurstRound CPUBurst::runOnce(const StatesSnapshot& states, TimePoint now) {
  CPUBurstRound round;
  // Waiting for the informer is not a problem worth a log line; a NodeSLO it cannot read is.
  auto skip = [&](std::string why, bool problem) {
    round.skipped_because = std::move(why);
    if (problem)
      report(round);
    return round;
  };
  if (!states.synced || states.node == nullptr || states.pods == nullptr)
    return skip("node or pods not synced yet", false);
  // As Koordinator: without a strategy nothing is touched, not even reset.
  if (states.node_slo == nullptr || states.node_slo->cpu_burst_strategy == nullptr)
    return skip("no NodeSLO cpuBurstStrategy for this node yet", false);
  auto strategy = decodeCPUBurstStrategy(*states.node_slo->cpu_burst_strategy);
  if (!strategy) {
    return skip(fmt::format("NodeSLO {}: {}; nothing written", states.node_slo->name,
                            strategy.error().message),
                true);
  }
  round.ran = true;
  round.share_pool_ratio = sharePoolRatio(states, now);
  round.node_state = nodeBurstState(round.share_pool_ratio, strategy->share_pool_threshold_percent);
  seen_.clear();
  std::set<std::string, std::less<>> pods_seen;
  for (const auto& pod : *states.pods) {
    if (!burstable(pod))
      continue;
    pods_seen.insert(pod.key());
    auto config = podCPUBurstConfig(strategy->config, annotationOf(pod, kAnnotationPodCPUBurst));
    if (!config) {
      // The pod's own setting is unreadable: its cgroups stay as they are rather than take the
      // node's policy it meant to override.
      auto& last = pod_errors_[pod.key()];
      if (last != config.error().message)
        KOORD_LOG_WARNING("cpu burst: pod {}: {}; its cgroups left as they are", pod.key(),
                          config.error().message);
      last = config.error().message;
      continue;
    }
    pod_errors_.erase(pod.key());
    ++round.pods;
    applyPod(pod, *config, round.node_state, now, round);
  }
  std::erase_if(pod_errors_, [&](const auto& e) { return !pods_seen.contains(e.first); });
  forgetUnseen();
  report(round);
  return round;
}

void CPUBurst::applyPod(const PodMeta& pod, const CPUBurstConfig& config, NodeBurstState node,
                        TimePoint now, CPUBurstRound& round) {
  auto dir = podCgroupDir(cgroups_.root().driver, pod);
  if (!dir) {
    round.errors.push_back(fmt::format("pod {}: {}", pod.key(), dir.error().message));
    return;
  }
  if (!cgroups_.exists(*dir, Resource::kCpuCfsQuota))
    return;  // not created yet, or gone: the next round sees it
  applyCPUBurst(pod, *dir, config, round);
  applyCfsQuotaBurst(pod, *dir, config, node, now, round);
}

void CPUBurst::applyCPUBurst(const PodMeta& pod, const std::string& pod_dir,
                             const CPUBurstConfig& config, CPUBurstRound& round) {
  std::error_code ec;
  if (!std::filesystem::exists(cgroups_.pathOf(pod_dir, Resource::kCpuCfsBurst), ec)) {
    // Only a policy that asks for a burst makes the missing file worth saying.
    round.burst_unsupported = config.cpuBurstEnabled();
    return;
  }
  auto write = [&](const std::string& dir, std::int64_t value) {
    auto r = cgroups_.write(dir, Resource::kCpuCfsBurst, std::to_string(value));
    if (!r) {
      if (!cgroup::isRefusedWrite(r.error()))
        round.errors.push_back(r.error().message);
      return false;
    }
    round.burst_written += *r == cgroup::WriteOutcome::kWritten ? 1 : 0;
    return true;
  };
  // The kernel refuses a burst above the cgroup's quota (and a quota below its burst), so a burst
  // is kept within both the limit's quota and what the cgroup has now.
  auto cap = [&](const std::string& dir, std::int64_t value, std::int64_t base) {
    std::int64_t bound = base;
    if (auto quota = cgroup::readInt64(cgroups_, dir, Resource::kCpuCfsQuota); quota && *quota > 0)
      bound = bound > 0 ? std::min(bound, *quota) : *quota;
    if (bound > 0 && value > bound) {
      ++round.burst_capped;
      return bound;
    }
    return value;
  };
  std::int64_t pod_burst = 0;
  std::int64_t pod_base = 0;
  bool any = false;
  for (const auto& c : pod.containers) {
    const std::int64_t limit = cpuMilliOf(c.limits);
    if (c.id.empty() || limit <= 0)
      continue;
    // A bad ID is said by applyCfsQuotaBurst, which sees the same containers.
    auto dir = cgroup::containerDir(cgroups_.root().driver, pod_dir, c.runtime, c.id);
    if (!dir || !cgroups_.exists(*dir, Resource::kCpuCfsBurst))
      continue;
    const std::int64_t base = baseCfsQuota(limit);
    const std::int64_t value = cap(*dir, containerCfsBurst(limit, config), base);
    if (write(*dir, value)) {
      pod_burst += value;
      pod_base += std::max<std::int64_t>(base, 0);
      any = true;
    }
  }
  if (any)
    write(pod_dir, cap(pod_dir, pod_burst, pod_base));
}

bool CPUBurst::limiterAllows(const ContainerMeta& c, std::int64_t limit_milli,
                             const CPUBurstConfig& config, TimePoint now) {
  if (config.cfs_quota_burst_period_seconds < 0)
    return true;
  const double limit_cores = static_cast<double>(limit_milli) / 1000.0;
  // Without a recent sample the container counts as at its limit: no tokens spent or saved.
  double used = limit_cores;
  if (auto sample = cache_.lastWithin(mc::MetricKind::kContainerCPUUsage, c.id,
                                      2 * options_.collect_interval, now))
    used = sample->value;
  const auto percent = static_cast<std::int64_t>(used / limit_cores * 100.0);
  auto it = limiters_.find(c.id);
  if (it == limiters_.end()) {
    it = limiters_
             .emplace(c.id, BurstLimiter(config.cfs_quota_burst_period_seconds,
                                         config.cfs_quota_burst_percent,
                                         options_.limiter_init_ratio(), now))
             .first;
  } else {
    it->second.reconfigure(config.cfs_quota_burst_period_seconds, config.cfs_quota_burst_percent,
                           options_.limiter_init_ratio(), now);
  }
  return it->second.allow(now, percent);
}

std::optional<double> CPUBurst::throttled(const ContainerMeta& c, const std::string& dir,
                                          CPUBurstRound& round) {
  auto stat = cgroup::readCpuThrottling(cgroups_, dir);
  if (!stat) {
    round.errors.push_back(stat.error().message);
    return std::nullopt;
  }
  const cgroup::CpuThrottling& now = *stat;
  auto it = throttle_.find(c.id);
  if (it == throttle_.end()) {
    throttle_.emplace(c.id, now);
    return std::nullopt;  // nothing to compare with yet
  }
  auto ratio = cgroup::throttledRatio(it->second, now);
  it->second = now;
  return ratio;
}

void CPUBurst::applyCfsQuotaBurst(const PodMeta& pod, const std::string& pod_dir,
                                  const CPUBurstConfig& config, NodeBurstState node, TimePoint now,
                                  CPUBurstRound& round) {
  for (const auto& c : pod.containers) {
    const std::int64_t limit = cpuMilliOf(c.limits);
    const std::int64_t base = baseCfsQuota(limit);
    if (c.id.empty() || base <= 0)
      continue;
    auto dir = cgroup::containerDir(cgroups_.root().driver, pod_dir, c.runtime, c.id);
    if (!dir) {
      round.errors.push_back(
          fmt::format("container {}: {}", containerKey(pod, c), dir.error().message));
      continue;
    }
    if (!cgroups_.exists(*dir, Resource::kCpuCfsQuota))
      continue;  // not created yet, or gone
    auto current = cgroup::readInt64(cgroups_, *dir, Resource::kCpuCfsQuota);
    if (!current) {
      round.errors.push_back(current.error().message);
      continue;
    }
    seen_.insert(c.id);
    // An unlimited cgroup (the kubelet without CFS quota) has nothing to burst past, and
    // writing the base quota would impose a limit it never had.
    if (*current <= 0)
      continue;
    const bool allowed = limiterAllows(c, limit, config, now);
    // Counters are kept only while the policy reads them: a ratio over a gap would be stale.
    std::optional<double> ratio;
    if (config.cfsQuotaBurstEnabled())
      ratio = throttled(c, *dir, round);
    else
      throttle_.erase(c.id);
    const CfsOperation op = cfsOperationForNode(
        node, containerCfsOperation(config.cfsQuotaBurstEnabled(), allowed, ratio));
    const std::int64_t target = targetCfsQuota(*current, base, cfsQuotaCeiling(base, config), op);
    if (target == *current)
      continue;
    const std::int64_t delta = target - *current;
    // The pod's quota moves with its container's, as Koordinator keeps the pod's sum; up, the pod
    // goes first and down, last, so that cgroup v1 never sees a container above its pod.
    std::optional<std::int64_t> pod_target;
    if (auto pod_quota = cgroup::readInt64(cgroups_, pod_dir, Resource::kCpuCfsQuota);
        pod_quota && *pod_quota > 0) {
      std::int64_t sum = 0;
      if (__builtin_add_overflow(*pod_quota, delta, &sum) || sum <= 0) {
        round.errors.push_back(
            fmt::format("pod {}: quota {} cannot move by {}", pod.key(), *pod_quota, delta));
        continue;
      }
      pod_target = sum;
    }
    auto write = [&](const std::string& d, std::int64_t v) {
      auto r = cgroups_.write(d, Resource::kCpuCfsQuota, std::to_string(v));
      if (!r) {
        if (!cgroup::isRefusedWrite(r.error()))
          round.errors.push_back(r.error().message);
        return false;
      }
      round.quota_written += *r == cgroup::WriteOutcome::kWritten ? 1 : 0;
      return true;
    };
    bool ok = true;
    if (delta > 0) {
      ok = (!pod_target || write(pod_dir, *pod_target)) && write(*dir, target);
    } else {
      ok = write(*dir, target) && (!pod_target || write(pod_dir, *pod_target));
    }
    if (ok)
      round.scaled.push_back({containerKey(pod, c), op, *current, target});
  }
}

std::optional<double> CPUBurst::sharePoolRatio(const StatesSnapshot& states, TimePoint now) const {
  const auto window = std::min<std::chrono::milliseconds>(5 * options_.reconcile_interval,
                                                          std::chrono::seconds(10));
  const TimePoint start = now - window;
  std::optional<double> node_used;
  if (auto s = cache_.summarize(mc::MetricKind::kNodeCPUUsage, "", start, now); s && s->count > 0)
    node_used = s->avg;
  // The node's logical CPUs, as Koordinator counts its processors; the node's capacity where the
  // topology could not be read.
  double cpus = static_cast<double>(topology_.cpus.size());
  if (cpus <= 0)
    cpus = static_cast<double>(cpuMilliOf(states.node->capacity)) / 1000.0;
  std::vector<SharePoolPod> pods;
  pods.reserve(states.pods->size());
  for (const auto& p : *states.pods) {
    SharePoolPod sp;
    sp.raw_qos = apis::podQoSClassRaw(p.labels);
    sp.request_milli = cpuMilliOf(p.pod_requests);
    if (auto s = cache_.summarize(mc::MetricKind::kPodCPUUsage, p.uid, start, now);
        s && s->count > 0)
      sp.used = s->avg;
    pods.push_back(sp);
  }
  return sharePoolUsageRatio(node_used, cpus, pods);
}

void CPUBurst::forgetUnseen() {
  std::erase_if(throttle_, [&](const auto& e) { return !seen_.contains(e.first); });
  std::erase_if(limiters_, [&](const auto& e) { return !seen_.contains(e.first); });
}

void CPUBurst::report(const CPUBurstRound& round) {
  if (round.burst_unsupported && !unsupported_logged_) {
    // A kernel without CPU burst is common and not a fault: said once, at info.
    KOORD_LOG_INFO("cpu burst: this kernel has no {} (Linux 5.14+); cfs burst not set",
                   cgroups_.root().version == cgroup::CgroupVersion::kV2 ? "cpu.max.burst"
                                                                         : "cpu.cfs_burst_us");
    unsupported_logged_ = true;
  }
  if (round.burst_capped > 0 && !capped_logged_) {
    KOORD_LOG_INFO(
        "cpu burst: cpuBurstPercent above what a cgroup's quota allows; bursts are capped at the "
        "quota, the most the kernel accepts");
    capped_logged_ = true;
  }
  std::string problem = round.skipped_because;
  const std::size_t shown = std::min(round.errors.size(), kMaxReportedErrors);
  for (std::size_t i = 0; i < shown; ++i)
    problem += (problem.empty() ? "" : "; ") + round.errors[i];
  if (round.errors.size() > shown)
    problem += fmt::format("; and {} more", round.errors.size() - shown);
  if (!problem.empty() && problem != last_problem_)
    KOORD_LOG_WARNING("cpu burst: {}", problem);
  last_problem_ = std::move(problem);
  KOORD_VLOG(5, "cpu burst: node {}, {} pods, {} bursts and {} quotas written",
             nodeBurstStateName(round.node_state), round.pods, round.burst_written,
             round.quota_written);
}

}  // namespace koord::roles::koordlet::qosmanager
