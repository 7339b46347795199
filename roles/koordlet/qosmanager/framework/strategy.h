// A QoS strategy as the koordlet's QoS manager runs it (Koordinator's qosmanager framework): one
// round at a time over a states snapshot, every interval from the options, where its feature gate
// is on. A strategy is a class plus one StrategySpec line in qosmanager/strategies.cpp.
#pragma once

#include <chrono>
#include <memory>
#include <string_view>

namespace koord::metrics {
class Registry;
}
namespace koord::cgroup {
class ResourceExecutor;
struct CpuTopology;
}  // namespace koord::cgroup

namespace koord::roles::koordlet {

struct KoordletOptions;
struct StatesSnapshot;
namespace metriccache {
class MetricCache;
}

namespace qosmanager {

class PodEvictor;

class QoSStrategy {
 public:
  virtual ~QoSStrategy() = default;

  /// false: this round is skipped before a snapshot is taken. Eviction strategies wait for the
  /// API server to say which Eviction version it takes: a round on a guess would cool down after
  /// evictions the server refused.
  virtual bool ready() const { return true; }
  /// One round on `states` at `now`; rounds never overlap.
  virtual void runOnce(const StatesSnapshot& states, std::chrono::system_clock::time_point now) = 0;
};

/// What a strategy is built from: the koordlet's modules, which outlive it.
struct StrategyContext {
  const metriccache::MetricCache& cache;
  cgroup::ResourceExecutor& cgroups;
  const cgroup::CpuTopology& topology;
  PodEvictor& evictor;
  const KoordletOptions& options;
  metrics::Registry& metrics;
};

/// StrategySpec::make for a strategy constructed from the context.
template <typename Strategy>
std::unique_ptr<QoSStrategy> makeStrategy(const StrategyContext& context) {
  return std::make_unique<Strategy>(context);
}

/// One line of the strategy table.
struct StrategySpec {
  /// The loop's name in log lines ("cpu suppress").
  std::string_view name{};
  /// The koordlet feature gate that turns it on: off, the strategy is not even built.
  std::string_view gate{};
  /// Between rounds; the first round also waits one interval, so that the metrics advisor has
  /// collected before a strategy reads the metric cache.
  std::chrono::milliseconds (*interval)(const KoordletOptions& options) = nullptr;
  std::unique_ptr<QoSStrategy> (*make)(const StrategyContext& context) = nullptr;
};

}  // namespace qosmanager
}  // namespace koord::roles::koordlet
