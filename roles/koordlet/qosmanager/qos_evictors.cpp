#include "qosmanager/qos_evictors.h"

#include <fmt/format.h>

#include "koord/core/log.h"
#include "koord/core/saturating.h"
#include "koordlet_options.h"
#include "metriccache/metric_cache.h"
#include "qosmanager/evict/cpu_evict_planner.h"
#include "qosmanager/evict/eviction_strategy.h"
#include "qosmanager/evict/memory_evict_planner.h"
#include "statesinformer/states_snapshot.h"

namespace koord::roles::koordlet::qosmanager {

namespace mc = metriccache;

namespace {

// The pod's koordinator.sh/eviction-policy, when it has one, must list the feature.
bool policyAllows(const PodMeta& pod, std::string_view feature) {
  auto it = pod.annotations.find("koordinator.sh/eviction-policy");
  if (it == pod.annotations.end())
    return true;
  return isEvictionPolicyAllowed(std::string_view(it->second), feature);
}

}  // namespace

QoSEvictors::QoSEvictors(const mc::MetricCache& cache, PodEvictor& evictor,
                         std::chrono::milliseconds collect_interval,
                         std::chrono::seconds memory_cool_time, std::chrono::seconds cpu_cool_time)
    : cache_(cache),
      evictor_(evictor),
      collect_interval_(collect_interval),
      memory_cool_time_(memory_cool_time),
      cpu_cool_time_(cpu_cool_time) {}

void QoSEvictors::logOnce(std::string& last, const std::string& message) {
  if (message != last)
    KOORD_LOG_WARNING("{}", message);
  last = message;
}

EvictRound QoSEvictors::memoryEvictOnce(const StatesSnapshot& states,
                                        std::chrono::system_clock::time_point now) {
  EvictRound round;
  auto skip = [&](std::string why) {
    round.skipped_because = std::move(why);
    return round;
  };
  if (now < last_memory_evict_ + memory_cool_time_)
    return skip("cooling down after the last eviction");
  if (!states.synced || states.node == nullptr || states.pods == nullptr)
    return skip("node or pods not synced yet");
  if (states.node_slo == nullptr || states.node_slo->resource_used_threshold_with_be == nullptr)
    return skip("no NodeSLO");
  auto strategy = decodeBEMemoryEvictStrategy(*states.node_slo->resource_used_threshold_with_be);
  if (!strategy) {
    logOnce(memory_last_error_, "memory evict: NodeSLO: " + strategy.error().message);
    return skip(strategy.error().message);
  }
  memory_last_error_.clear();
  if (!strategy->enable)
    return skip("disabled by the NodeSLO");
  auto capacity = states.node->capacity.find("memory");
  if (capacity == states.node->capacity.end() || capacity->second.value() <= 0)
    return skip("node memory capacity unknown");
  const auto max_age = collect_interval_ * 2 + std::chrono::milliseconds(500);
  auto used = cache_.lastWithin(mc::MetricKind::kNodeMemoryUsage, "", max_age, now);
  if (!used)
    return skip("no recent node memory usage");

  std::vector<BEMemoryEvictCandidate> candidates;
  for (const auto& p : *states.pods) {
    if (!p.isRunning() && p.phase != PodPhase::kPending)
      continue;
    BEMemoryEvictCandidate c;
    c.key = p.key();
    c.name = p.name;
    c.uid = p.uid;
    c.priority = p.priority_value;
    c.qos_label = std::string(apis::qosClassName(apis::podQoSClassRaw(p.labels)));
    if (auto m = cache_.lastWithin(mc::MetricKind::kPodMemoryUsage, p.uid, max_age, now))
      c.memory_used_bytes = static_cast<std::int64_t>(m->value);
    c.eviction_allowed = !evictor_.recentlyEvicted(p.uid) && policyAllows(p, kBEMemoryEvictFeature);
    candidates.push_back(std::move(c));
  }
  auto plan = planBEMemoryEviction(
      *strategy, {capacity->second.value(), static_cast<std::int64_t>(used->value)}, candidates);
  if (!plan) {
    logOnce(memory_last_error_, "memory evict: " + plan.error().message);
    return skip(plan.error().message);
  }
  round.ran = true;
  round.release = plan->release_bytes;
  if (plan->victims.empty())
    return round;
  const auto message = fmt::format(
      "node memory usage {}% is above the threshold {}%, releasing {} bytes down to {}%",
      plan->usage_percent, strategy->threshold_percent, plan->release_bytes, plan->lower_percent);
  for (const auto& v : plan->victims) {
    for (const auto& p : *states.pods) {
      if (p.uid != v.uid)
        continue;
      evictor_.evict(p, std::string(kBEMemoryEvictReason), message, [](bool) {});
      round.evicted.push_back(p.key());
    }
  }
  last_memory_evict_ = now;
  return round;
}

EvictRound QoSEvictors::cpuEvictOnce(const StatesSnapshot& states,
                                     std::chrono::system_clock::time_point now) {
  EvictRound round;
  auto skip = [&](std::string why) {
    round.skipped_because = std::move(why);
    return round;
  };
  if (now < last_cpu_evict_ + cpu_cool_time_)
    return skip("cooling down after the last eviction");
  if (!states.synced || states.node == nullptr || states.pods == nullptr)
    return skip("node or pods not synced yet");
  if (states.node_slo == nullptr || states.node_slo->resource_used_threshold_with_be == nullptr)
    return skip("no NodeSLO");
  auto strategy = decodeBECPUEvictStrategy(*states.node_slo->resource_used_threshold_with_be);
  if (!strategy) {
    logOnce(cpu_last_error_, "cpu evict: NodeSLO: " + strategy.error().message);
    return skip(strategy.error().message);
  }
  cpu_last_error_.clear();
  if (!strategy->enable)
    return skip("disabled by the NodeSLO");

  const auto interval_s = std::max<std::int64_t>(
      1, std::chrono::duration_cast<std::chrono::seconds>(collect_interval_).count());
  BECPUEvictInput in;
  in.collect_interval_seconds = interval_s;
  in.window_seconds = beCPUEvictWindowSeconds(*strategy, interval_s);
  const auto window_start = now - std::chrono::seconds(in.window_seconds);
  const auto max_age = collect_interval_ * 2 + std::chrono::milliseconds(500);
  auto series = [&](mc::MetricKind kind, BECPUSeries& avg, BECPUSeries& latest) {
    if (auto w = cache_.summarize(kind, "", window_start, now)) {
      avg.milli = w->avg * 1000;
      avg.samples = static_cast<std::int64_t>(w->count);
    }
    if (auto l = cache_.lastWithin(kind, "", max_age, now)) {
      latest.milli = l->value * 1000;
      latest.samples = 1;
    }
  };
  series(mc::MetricKind::kBECPUUsage, in.window_average.usage, in.latest.usage);
  series(mc::MetricKind::kBECPURequest, in.window_average.request, in.latest.request);
  series(mc::MetricKind::kBECPULimit, in.window_average.real_limit, in.latest.real_limit);
  if (auto a = states.node->allocatable.find("kubernetes.io/batch-cpu");
      a != states.node->allocatable.end())
    in.batch_cpu_allocatable_milli = a->second.value();

  std::vector<BECPUEvictCandidate> candidates;
  for (const auto& p : *states.pods) {
    if (!p.isRunning())
      continue;
    BECPUEvictCandidate c;
    c.key = p.key();
    c.name = p.name;
    c.uid = p.uid;
    c.priority = p.priority_value;
    c.qos_label = std::string(apis::qosClassName(apis::podQoSClassRaw(p.labels)));
    if (auto u = cache_.lastWithin(mc::MetricKind::kPodCPUUsage, p.uid, max_age, now))
      c.cpu_used_milli = static_cast<std::int64_t>(u->value * 1000);
    for (const auto& container : p.containers) {
      auto r = container.requests.find("kubernetes.io/batch-cpu");
      if (r != container.requests.end() && r->second.value() > 0)
        c.batch_cpu_request_milli =
            koord::saturatingAdd(c.batch_cpu_request_milli, r->second.value());
    }
    c.eviction_allowed = !evictor_.recentlyEvicted(p.uid) && policyAllows(p, kBECPUEvictFeature);
    candidates.push_back(std::move(c));
  }
  auto plan = planBECPUEviction(*strategy, in, candidates);
  round.ran = true;
  round.release = plan.release_milli;
  if (plan.outcome != BECPUEvictOutcome::kEvict || plan.victims.empty()) {
    round.skipped_because = std::string(beCPUEvictOutcomeName(plan.outcome));
    return round;
  }
  const auto message = fmt::format(
      "BE CPU satisfaction below {}%: releasing {}m of batch-cpu requests (BE usage {:.0f}m, "
      "request {:.0f}m, real limit {:.0f}m)",
      strategy->satisfaction_lower_percent.value_or(0), plan.release_milli, in.latest.usage.milli,
      in.latest.request.milli, in.latest.real_limit.milli);
  for (const auto& v : plan.victims) {
    for (const auto& p : *states.pods) {
      if (p.uid != v.uid)
        continue;
      evictor_.evict(p, std::string(kBECPUEvictReason), message, [](bool) {});
      round.evicted.push_back(p.key());
    }
  }
  last_cpu_evict_ = now;
  return round;
}

EvictionRoundStrategy::EvictionRoundStrategy(const StrategyContext& c, Round round)
    : evictor_(c.evictor),
      evictors_(c.cache, c.evictor, c.options.collect_res_used_interval,
                std::chrono::seconds(c.options.memory_evict_cool_time_seconds),
                std::chrono::seconds(c.options.cpu_evict_cool_time_seconds)),
      round_(round) {}

bool EvictionRoundStrategy::ready() const {
  return evictor_.evictionVersion().has_value();
}

void EvictionRoundStrategy::runOnce(const StatesSnapshot& states,
                                    std::chrono::system_clock::time_point now) {
  (evictors_.*round_)(states, now);
}

}  // namespace koord::roles::koordlet::qosmanager
