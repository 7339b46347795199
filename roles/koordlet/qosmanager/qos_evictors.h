// The BEMemoryEvict and BECPUEvict strategies' rounds: read the latest usage from the metric
// cache, let the planners pick BE victims, evict them through the PodEvictor, then cool down.
#pragma once

#include <chrono>
#include <string>

#include "qosmanager/evict/pod_evictor.h"
#include "qosmanager/framework/strategy.h"

namespace koord::roles::koordlet {

struct StatesSnapshot;
namespace metriccache {
class MetricCache;
}

namespace qosmanager {

/// What a round did, for logs and tests.
struct EvictRound {
  bool ran = false;
  std::string skipped_because;
  std::int64_t release = 0;          // bytes (memory) or milli-cores (CPU)
  std::vector<std::string> evicted;  // pod keys, in eviction order
};

class QoSEvictors {
 public:
  QoSEvictors(const metriccache::MetricCache& cache, PodEvictor& evictor,
              std::chrono::milliseconds collect_interval, std::chrono::seconds memory_cool_time,
              std::chrono::seconds cpu_cool_time);

  EvictRound memoryEvictOnce(const StatesSnapshot& states,
                             std::chrono::system_clock::time_point now);
  EvictRound cpuEvictOnce(const StatesSnapshot& states, std::chrono::system_clock::time_point now);

 private:
  void logOnce(std::string& last, const std::string& message);

  const metriccache::MetricCache& cache_;
  PodEvictor& evictor_;
  std::chrono::milliseconds collect_interval_;
  std::chrono::seconds memory_cool_time_;
  std::chrono::seconds cpu_cool_time_;
  std::chrono::system_clock::time_point last_memory_evict_{};
  std::chrono::system_clock::time_point last_cpu_evict_{};
  std::string memory_last_error_;
  std::string cpu_last_error_;
};

/// One of the rounds above as a QoS strategy. Each strategy has evictors of its own: the two
/// rounds share no state but the PodEvictor's.
class EvictionRoundStrategy final : public QoSStrategy {
 public:
  using Round = EvictRound (QoSEvictors::*)(const StatesSnapshot&,
                                            std::chrono::system_clock::time_point);
  EvictionRoundStrategy(const StrategyContext& context, Round round);

  /// Not before the API server said which Eviction version it takes.
  bool ready() const override;
  void runOnce(const StatesSnapshot& states, std::chrono::system_clock::time_point now) override;

 private:
  const PodEvictor& evictor_;
  QoSEvictors evictors_;
  Round round_;
};

}  // namespace qosmanager
}  // namespace koord::roles::koordlet
