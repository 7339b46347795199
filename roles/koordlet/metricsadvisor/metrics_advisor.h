// The koordlet's metrics advisor for the gated collectors: builds those whose gates (and flags)
// are on from the collector table and runs each in a loop of its own over the informer's snapshots.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "metricsadvisor/collectors.h"

namespace boost::asio {
class io_context;
}
namespace koord {
class FeatureGate;
}

namespace koord::roles::koordlet {

class PeriodicTask;

namespace metricsadvisor {

class MetricsAdvisor {
 public:
  /// `snapshot` is taken once per round; what `context` refers to outlives the advisor.
  MetricsAdvisor(boost::asio::io_context& io, std::function<StatesSnapshot()> snapshot,
                 const FeatureGate& gates, const CollectorContext& context,
                 std::span<const CollectorSpec> table = koordletCollectors());
  ~MetricsAdvisor();
  MetricsAdvisor(const MetricsAdvisor&) = delete;
  MetricsAdvisor& operator=(const MetricsAdvisor&) = delete;

  void start();
  void stop();

  /// The collectors built, in table order.
  std::vector<std::string_view> collectors() const;

 private:
  struct Running {
    const CollectorSpec* spec;
    std::chrono::milliseconds interval;
    std::unique_ptr<Collector> collector;
    std::unique_ptr<PeriodicTask> task;
  };
  std::function<StatesSnapshot()> snapshot_;
  std::vector<Running> running_;
};

}  // namespace metricsadvisor
}  // namespace koord::roles::koordlet
