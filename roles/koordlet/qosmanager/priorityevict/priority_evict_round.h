// CPUEvict and MemoryEvict (Koordinator master): when node CPU or memory use passes the NodeSLO's
// threshold, evict pods of any QoS up to evictEnabledPriorityThreshold that opted in with
// koordinator.sh/eviction-enabled=true, lowest priority first, then cool down.
#pragma once

#include <chrono>
#include <string>
#include <unordered_map>

#include "qosmanager/evict/priority_evict_planner.h"
#include "qosmanager/framework/strategy.h"
#include "qosmanager/qos_evictors.h"

namespace koord::roles::koordlet::qosmanager {

class PriorityEvictRound {
 public:
  PriorityEvictRound(const metriccache::MetricCache& cache, PodEvictor& evictor,
                     EvictResource resource, std::chrono::milliseconds collect_interval,
                     std::chrono::seconds cool_time);

  EvictRound runOnce(const StatesSnapshot& states, std::chrono::system_clock::time_point now);

 private:
  void logOnce(const std::string& message);
  /// The pod's koordinator.sh/eviction-priority; 0 when unset, and when malformed (logged once
  /// per pod).
  std::int32_t evictionPriority(const PodMeta& pod);
  std::optional<std::int64_t> nodeUsed(const StatesSnapshot& states,
                                       const UsedThresholdEvictStrategy& strategy,
                                       std::chrono::system_clock::time_point now) const;

  const metriccache::MetricCache& cache_;
  PodEvictor& evictor_;
  const EvictResource resource_;
  const std::chrono::milliseconds collect_interval_;
  const std::chrono::seconds cool_time_;
  std::chrono::system_clock::time_point last_evict_{};
  std::string last_error_;
  /// Pod key -> the malformed eviction-priority value last logged; bounded by the pods listed.
  std::unordered_map<std::string, std::string> bad_priority_logged_;
};

/// The strategies: gate CPUEvict every -cpu-evict-interval-seconds, gate MemoryEvict every
/// -memory-evict-interval-seconds; both off by default, as in Koordinator.
StrategySpec cpuUsedEvictStrategy();
StrategySpec memoryUsedEvictStrategy();

}  // namespace koord::roles::koordlet::qosmanager
