// A metrics collector as the koordlet's metrics advisor runs it (Koordinator's metricsadvisor
// framework): one round at a time over a states snapshot, every interval from the options, where
// its feature gate is on. A collector is a class plus one CollectorSpec line in
// metricsadvisor/collectors.cpp.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <string_view>

namespace koord::metrics {
class Registry;
}
namespace koord::cgroup {
class ResourceExecutor;
}

namespace koord::roles::koordlet {

struct KoordletOptions;
struct StatesSnapshot;
namespace metriccache {
class MetricCache;
}

namespace metricsadvisor {

class Collector {
 public:
  virtual ~Collector() = default;

  /// One round on `states` (pods as the informer last listed them); rounds never overlap.
  /// `now` stamps the cache's samples, `steady_now` times counter rates.
  virtual void collect(const StatesSnapshot& states, std::chrono::system_clock::time_point now,
                       std::chrono::steady_clock::time_point steady_now) = 0;
};

/// What a collector is built from: the koordlet's modules, which outlive it.
struct CollectorContext {
  const cgroup::ResourceExecutor& cgroups;
  metriccache::MetricCache& cache;
  metrics::Registry& metrics;
  const KoordletOptions& options;
};

/// CollectorSpec::make for a collector constructed from the context.
template <typename C>
std::unique_ptr<Collector> makeCollector(const CollectorContext& context) {
  return std::make_unique<C>(context);
}

/// One line of the collector table.
struct CollectorSpec {
  /// The loop's name in log lines ("psi collector").
  std::string_view name{};
  /// The koordlet feature gate that turns it on: off, the collector is not even built. Empty for
  /// a collector Koordinator runs without a gate of its own (PodThrottledCollector).
  std::string_view gate{};
  /// Between rounds; the first round comes one interval after start.
  std::chrono::milliseconds (*interval)(const KoordletOptions& options) = nullptr;
  std::unique_ptr<Collector> (*make)(const CollectorContext& context) = nullptr;
  /// Besides the gate, a flag may keep the collector off (ResctrlCollector also needs
  /// -enable-resctrl-collector); null when the gate alone decides.
  bool (*wanted)(const KoordletOptions& options) = nullptr;
};

}  // namespace metricsadvisor
}  // namespace koord::roles::koordlet
