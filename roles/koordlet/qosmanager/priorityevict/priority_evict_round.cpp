#include "qosmanager/priorityevict/priority_evict_round.h"

#include <charconv>
#include <limits>
#include <vector>

#include <fmt/format.h>

#include "koord/apis/extension.h"
#include "koord/core/log.h"
#include "koordlet_options.h"
#include "metriccache/metric_cache.h"
#include "qosmanager/evict/eviction_strategy.h"
#include "statesinformer/states_snapshot.h"

namespace koord::roles::koordlet::qosmanager {

namespace mc = metriccache;

namespace {

constexpr std::string_view kLabelEvictionEnabled = "koordinator.sh/eviction-enabled";
constexpr std::string_view kAnnotationEvictionPriority = "koordinator.sh/eviction-priority";
constexpr std::string_view kAnnotationEvictionPolicy = "koordinator.sh/eviction-policy";

std::string_view featureOf(EvictResource r) {
  return r == EvictResource::kCPU ? kCPUEvictFeature : kMemoryEvictFeature;
}

template <typename Int>
std::optional<Int> parseInt(std::string_view s) {
  Int v{};
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty())
    return std::nullopt;
  return v;
}

// Koordinator's GetPodPriorityValueWithDefault.
std::int32_t priorityWithDefault(const PodMeta& pod) {
  if (pod.priority_value && *pod.priority_value != 0)
    return *pod.priority_value;
  if (auto band = apis::priorityBand(pod.priority))
    return band->default_value;
  return 0;
}

}  // namespace

PriorityEvictRound::PriorityEvictRound(const mc::MetricCache& cache, PodEvictor& evictor,
                                       EvictResource resource,
                                       std::chrono::milliseconds collect_interval,
                                       std::chrono::seconds cool_time)
    : cache_(cache),
      evictor_(evictor),
      resource_(resource),
      collect_interval_(collect_interval),
      cool_time_(cool_time) {}

void PriorityEvictRound::logOnce(const std::string& message) {
  if (message != last_error_)
    KOORD_LOG_WARNING("{}: {}", featureOf(resource_), message);
  last_error_ = message;
}

std::int32_t PriorityEvictRound::evictionPriority(const PodMeta& pod) {
  auto it = pod.annotations.find(std::string(kAnnotationEvictionPriority));
  if (it == pod.annotations.end())
    return 0;
  if (auto v = parseInt<std::int32_t>(it->second))
    return *v;
  auto& logged = bad_priority_logged_[pod.key()];
  if (logged != it->second) {
    KOORD_LOG_WARNING("{}: pod {}: {} {:?} is not an int32, using 0", featureOf(resource_),
                      pod.key(), kAnnotationEvictionPriority, it->second);
    logged = it->second;
  }
  return 0;
}

std::optional<std::int64_t> PriorityEvictRound::nodeUsed(
    const StatesSnapshot&, const UsedThresholdEvictStrategy& strategy,
    std::chrono::system_clock::time_point now) const {
  if (resource_ == EvictResource::kMemory) {
    auto used = cache_.lastWithin(mc::MetricKind::kNodeMemoryUsage, "",
                                  collect_interval_ * 2 + std::chrono::milliseconds(500), now);
    if (!used)
      return std::nullopt;
    return static_cast<std::int64_t>(used->value);
  }
  // CPU peaks are shaved: the average over the window, never shorter than a collect interval.
  auto window = std::max<std::chrono::milliseconds>(
      collect_interval_, std::chrono::seconds(strategy.time_window_seconds.value_or(0)));
  auto summary = cache_.summarize(mc::MetricKind::kNodeCPUUsage, "", now - window, now);
  if (!summary || summary->count == 0)
    return std::nullopt;
  return static_cast<std::int64_t>(summary->avg * 1000);
}

EvictRound PriorityEvictRound::runOnce(const StatesSnapshot& states,
                                       std::chrono::system_clock::time_point now) {
  EvictRound round;
  auto skip = [&](std::string why) {
    round.skipped_because = std::move(why);
    return round;
  };
  if (now < last_evict_ + cool_time_)
    return skip("cooling down after the last eviction");
  if (!states.synced || states.node == nullptr || states.pods == nullptr)
    return skip("node or pods not synced yet");
  if (states.node_slo == nullptr || states.node_slo->resource_used_threshold_with_be == nullptr)
    return skip("no NodeSLO");
  auto strategy = decodeUsedThresholdEvictStrategy(
      *states.node_slo->resource_used_threshold_with_be, resource_);
  if (!strategy) {
    logOnce("NodeSLO: " + strategy.error().message);
    return skip(strategy.error().message);
  }
  if (!strategy->enable) {
    last_error_.clear();
    return skip("disabled by the NodeSLO");
  }
  if (auto problem = usedThresholdConfigProblem(*strategy, resource_); !problem.empty()) {
    logOnce("NodeSLO: " + problem);
    return skip(problem);
  }
  last_error_.clear();
  const bool cpu = resource_ == EvictResource::kCPU;
  auto capacity = states.node->capacity.find(cpu ? "cpu" : "memory");
  if (capacity == states.node->capacity.end())
    return skip("node capacity unknown");
  const std::int64_t capacity_value =
      cpu ? capacity->second.milliValue() : capacity->second.value();
  auto used = nodeUsed(states, *strategy, now);
  if (!used)
    return skip("no recent node usage");

  const auto max_age = collect_interval_ * 2 + std::chrono::milliseconds(500);
  const std::string_view feature = featureOf(resource_);
  std::vector<PriorityEvictCandidate> candidates;
  candidates.reserve(states.pods->size());
  for (const auto& p : *states.pods) {
    if (p.phase == PodPhase::kSucceeded || p.phase == PodPhase::kFailed)
      continue;
    PriorityEvictCandidate c;
    c.key = p.key();
    c.uid = p.uid;
    c.priority = priorityWithDefault(p);
    c.eviction_priority = evictionPriority(p);
    c.label_priority = c.priority;
    if (auto l = p.labels.find(std::string(apis::kLabelPodPriority)); l != p.labels.end()) {
      if (auto v = parseInt<std::int64_t>(l->second))
        c.label_priority = *v;
    }
    auto enabled = p.labels.find(std::string(kLabelEvictionEnabled));
    c.eviction_enabled = enabled != p.labels.end() && enabled->second == "true";
    auto policy = p.annotations.find(std::string(kAnnotationEvictionPolicy));
    c.policy_allowed = isEvictionPolicyAllowed(
        policy == p.annotations.end() ? std::nullopt
                                      : std::optional<std::string_view>(policy->second),
        feature);
    auto kind = cpu ? mc::MetricKind::kPodCPUUsage : mc::MetricKind::kPodMemoryUsage;
    if (auto u = cache_.lastWithin(kind, p.uid, max_age, now))
      c.used = static_cast<std::int64_t>(cpu ? u->value * 1000 : u->value);
    c.already_evicted = evictor_.recentlyEvicted(p.uid);
    candidates.push_back(std::move(c));
  }
  // Pods gone from the list take their logged malformed value with them.
  std::erase_if(bad_priority_logged_, [&](const auto& e) {
    return std::none_of(states.pods->begin(), states.pods->end(),
                        [&](const PodMeta& p) { return p.key() == e.first; });
  });
  auto plan = planPriorityEviction(*strategy, {capacity_value, *used}, candidates);
  if (!plan) {
    logOnce(plan.error().message);
    return skip(plan.error().message);
  }
  round.ran = true;
  round.release = plan->release;
  if (plan->victims.empty())
    return round;
  const std::string reason = fmt::format("trigger by koordlet feature {}", feature);
  const auto message =
      fmt::format("node {} usage {}% is above the threshold {}%, releasing {}{} down to {}%",
                  cpu ? "cpu" : "memory", plan->usage_percent, *strategy->threshold_percent,
                  plan->release, cpu ? "m" : " bytes", plan->lower_percent);
  for (const auto& key : plan->victims) {
    for (const auto& p : *states.pods) {
      if (p.key() != key)
        continue;
      evictor_.evict(p, reason, message, [](bool) {});
      round.evicted.push_back(key);
      break;
    }
  }
  last_evict_ = now;
  return round;
}

namespace {

class PriorityEvictStrategy final : public QoSStrategy {
 public:
  PriorityEvictStrategy(const StrategyContext& c, EvictResource resource)
      : evictor_(c.evictor),
        round_(c.cache, c.evictor, resource, c.options.collect_res_used_interval,
               std::chrono::seconds(resource == EvictResource::kCPU
                                        ? c.options.cpu_evict_cool_time_seconds
                                        : c.options.memory_evict_cool_time_seconds)) {}

  bool ready() const override { return evictor_.evictionVersion().has_value(); }
  void runOnce(const StatesSnapshot& states, std::chrono::system_clock::time_point now) override {
    round_.runOnce(states, now);
  }

 private:
  const PodEvictor& evictor_;
  PriorityEvictRound round_;
};

}  // namespace

StrategySpec cpuUsedEvictStrategy() {
  return {
      .name = "cpu evict by priority",
      .gate = kCPUEvictFeature,
      .interval = [](const KoordletOptions& o) -> std::chrono::milliseconds {
        return std::chrono::seconds(o.cpu_evict_interval_seconds);
      },
      .make = [](const StrategyContext& c) -> std::unique_ptr<QoSStrategy> {
        return std::make_unique<PriorityEvictStrategy>(c, EvictResource::kCPU);
      },
  };
}

StrategySpec memoryUsedEvictStrategy() {
  return {
      .name = "memory evict by priority",
      .gate = kMemoryEvictFeature,
      .interval = [](const KoordletOptions& o) -> std::chrono::milliseconds {
        return std::chrono::seconds(o.memory_evict_interval_seconds);
      },
      .make = [](const StrategyContext& c) -> std::unique_ptr<QoSStrategy> {
        return std::make_unique<PriorityEvictStrategy>(c, EvictResource::kMemory);
      },
  };
}

}  // namespace koord::roles::koordlet::qosmanager
