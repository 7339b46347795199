// MigrationLimits: the migrating set and the caps over it, checked and counted under one lock;
// the per-workload object limiter; the eviction token bucket.
#include "limits.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

namespace koord::roles::descheduler::migration {

namespace {

using Steady = std::chrono::steady_clock;

double secondsBetween(Steady::time_point from, Steady::time_point to) {
  if (to <= from)
    return 0;
  return std::chrono::duration<double>(to - from).count();
}

Admission waitFor(std::string reason) {
  return Admission{false, std::move(reason)};
}

}  // namespace

MigrationLimits::MigrationLimits(const MigrationControllerArgs& args, Clock& clock)
    : args_(args), clock_(clock) {}

Admission MigrationLimits::check(const MigrationCandidate& c) const {
  std::lock_guard lock(mu_);
  return checkLocked(c);
}

Admission MigrationLimits::tryAdmit(const MigrationCandidate& c) {
  std::lock_guard lock(mu_);
  Admission a = checkLocked(c);
  if (a.admitted)
    trackLocked(c);
  return a;
}

void MigrationLimits::track(const MigrationCandidate& c) {
  std::lock_guard lock(mu_);
  trackLocked(c);
}

void MigrationLimits::release(std::string_view job_uid) {
  std::lock_guard lock(mu_);
  if (auto it = jobs_.find(job_uid); it != jobs_.end())
    jobs_.erase(it);
}

void MigrationLimits::trackLocked(const MigrationCandidate& c) {
  jobs_[c.job_uid] = Tracked{c.pod_namespace, c.podKey(), c.pod_uid, c.node_name,
                             c.workload ? c.workload->uid : std::string()};
}

Admission MigrationLimits::checkLocked(const MigrationCandidate& c) const {
  if (c.evict_annotation)
    return Admission{true, {}};
  // Each count leaves out jobs of the candidate's own pod, as Koordinator's filters do.
  const auto others = [&](const Tracked& t) { return t.pod_uid != c.pod_uid; };

  if (c.workload && objectLimitedLocked(c.workload->uid)) {
    return waitFor(fmt::format("limitedObject: workload {} {}/{} migrated too recently",
                               c.workload->kind, c.pod_namespace, c.workload->name));
  }

  const std::int32_t per_node = args_.max_migrating_per_node.value_or(0);
  if (!c.node_name.empty() && per_node > 0) {
    std::set<std::string_view> pods;
    for (const auto& [uid, t] : jobs_) {
      if (others(t) && t.node_name == c.node_name)
        pods.insert(t.pod_key);
    }
    if (pods.size() >= static_cast<std::size_t>(per_node))
      return waitFor(fmt::format("maxMigratingPerNode: {} pods migrating on node {}, the cap is {}",
                                 pods.size(), c.node_name, per_node));
  }

  const std::int32_t per_namespace = args_.max_migrating_per_namespace.value_or(0);
  if (per_namespace > 0) {
    std::size_t count = 0;
    for (const auto& [uid, t] : jobs_) {
      if (others(t) && t.pod_namespace == c.pod_namespace)
        ++count;
    }
    if (count >= static_cast<std::size_t>(per_namespace))
      return waitFor(
          fmt::format("maxMigratingPerNamespace: {} pods migrating in namespace {}, the cap is {}",
                      count, c.pod_namespace, per_namespace));
  }

  if (c.workload) {
    if (!c.expected_replicas)
      return waitFor(fmt::format("workload {} {}/{}: its expected replicas are unknown",
                                 c.workload->kind, c.pod_namespace, c.workload->name));
    const std::int64_t replicas = *c.expected_replicas;
    const std::int64_t max_migrating = maxPerWorkload(replicas, args_.max_migrating_per_workload);
    const std::int64_t max_unavailable =
        maxPerWorkload(replicas, args_.max_unavailable_per_workload);
    std::set<std::string_view> migrating;
    for (const auto& [uid, t] : jobs_) {
      if (others(t) && t.workload_uid == c.workload->uid)
        migrating.insert(t.pod_key);
    }
    if (!migrating.empty() && static_cast<std::int64_t>(migrating.size()) >= max_migrating)
      return waitFor(fmt::format(
          "maxMigratingPerWorkload: {} pods of {} {}/{} migrating, the cap is {}", migrating.size(),
          c.workload->kind, c.pod_namespace, c.workload->name, max_migrating));
    std::set<std::string_view> unavailable(migrating.begin(), migrating.end());
    unavailable.insert(c.unavailable_pods.begin(), c.unavailable_pods.end());
    if (static_cast<std::int64_t>(unavailable.size()) >= max_unavailable)
      return waitFor(fmt::format(
          "maxUnavailablePerWorkload: {} pods of {} {}/{} unavailable or migrating, the cap is {}",
          unavailable.size(), c.workload->kind, c.pod_namespace, c.workload->name,
          max_unavailable));
  }
  return Admission{true, {}};
}

std::size_t MigrationLimits::migratingOnNode(std::string_view node) const {
  std::lock_guard lock(mu_);
  std::set<std::string_view> pods;
  for (const auto& [uid, t] : jobs_) {
    if (t.node_name == node)
      pods.insert(t.pod_key);
  }
  return pods.size();
}

std::size_t MigrationLimits::migratingInNamespace(std::string_view ns) const {
  std::lock_guard lock(mu_);
  return static_cast<std::size_t>(std::count_if(
      jobs_.begin(), jobs_.end(), [&](const auto& e) { return e.second.pod_namespace == ns; }));
}

std::size_t MigrationLimits::migratingInWorkload(std::string_view workload_uid) const {
  std::lock_guard lock(mu_);
  if (workload_uid.empty())
    return 0;
  std::set<std::string_view> pods;
  for (const auto& [uid, t] : jobs_) {
    if (t.workload_uid == workload_uid)
      pods.insert(t.pod_key);
  }
  return pods.size();
}

std::size_t MigrationLimits::migrating() const {
  std::lock_guard lock(mu_);
  return jobs_.size();
}

void MigrationLimits::dropExpiredLocked(Steady::time_point now) const {
  // Koordinator forgets a workload's limiter half a window after its last eviction; by then it
  // is full again, so forgetting changes nothing but memory.
  const ObjectLimiter* limiter = args_.workloadLimiter();
  if (limiter == nullptr) {
    buckets_.clear();
    return;
  }
  const auto keep = limiter->duration + limiter->duration / 2;
  std::erase_if(buckets_, [&](const auto& e) { return now - e.second.last_tracked >= keep; });
}

bool MigrationLimits::objectLimitedLocked(std::string_view workload_uid) const {
  const auto now = clock_.monotonicNow();
  dropExpiredLocked(now);
  auto it = buckets_.find(workload_uid);
  if (it == buckets_.end())
    return false;
  const ObjectBucket& b = it->second;
  const double tokens = std::min(1.0, b.tokens + b.rate_per_second * secondsBetween(b.last, now));
  return tokens < 1.0;
}

bool MigrationLimits::objectLimited(std::string_view workload_uid) const {
  std::lock_guard lock(mu_);
  return objectLimitedLocked(workload_uid);
}

void MigrationLimits::trackEvicted(const WorkloadRef& workload,
                                   std::optional<std::int32_t> expected_replicas) {
  const ObjectLimiter* limiter = args_.workloadLimiter();
  if (limiter == nullptr || !expected_replicas)
    return;
  const auto& cap =
      limiter->max_migrating ? limiter->max_migrating : args_.max_migrating_per_workload;
  const std::int64_t max = maxPerWorkload(*expected_replicas, cap);
  if (max <= 0)
    return;
  const double rate =
      static_cast<double>(max) / std::chrono::duration<double>(limiter->duration).count();
  std::lock_guard lock(mu_);
  const auto now = clock_.monotonicNow();
  dropExpiredLocked(now);
  auto [it, inserted] = buckets_.try_emplace(workload.uid);
  ObjectBucket& b = it->second;
  if (inserted) {
    b.tokens = 1;
  } else {
    b.tokens = std::min(1.0, b.tokens + b.rate_per_second * secondsBetween(b.last, now));
  }
  b.rate_per_second = rate;
  b.last = now;
  b.last_tracked = now;
  // An eviction past the limit still happened; it just spends no token it does not have.
  if (b.tokens >= 1.0)
    b.tokens -= 1.0;
}

bool expectedReplicasForbid(const MigrationControllerArgs& args, std::int32_t expected_replicas) {
  if (args.skip_check_expected_replicas.value_or(false))
    return false;
  const std::int64_t max_migrating =
      maxPerWorkload(expected_replicas, args.max_migrating_per_workload);
  const std::int64_t max_unavailable =
      maxPerWorkload(expected_replicas, args.max_unavailable_per_workload);
  return expected_replicas == 1 || expected_replicas == max_migrating ||
         expected_replicas == max_unavailable;
}

EvictRateLimiter::EvictRateLimiter(double qps, std::int32_t burst, Clock& clock)
    : qps_(qps),
      burst_(static_cast<double>(std::max<std::int32_t>(burst, 1))),
      clock_(clock),
      tokens_(burst_),
      last_(clock.monotonicNow()) {}

bool EvictRateLimiter::tryAccept() {
  std::lock_guard lock(mu_);
  const auto now = clock_.monotonicNow();
  tokens_ = std::min(burst_, tokens_ + qps_ * secondsBetween(last_, now));
  last_ = std::max(last_, now);
  if (tokens_ < 1.0)
    return false;
  tokens_ -= 1.0;
  return true;
}

}  // namespace koord::roles::descheduler::migration
