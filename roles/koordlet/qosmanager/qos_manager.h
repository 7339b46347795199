// The koordlet's QoS manager (Koordinator's qosmanager): builds the strategies whose gates are on
// from the strategy table and runs each in a loop of its own over the informer's snapshots.
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "qosmanager/strategies.h"

namespace boost::asio {
class io_context;
}
namespace koord {
class FeatureGate;
}

namespace koord::roles::koordlet {

class PeriodicTask;

namespace qosmanager {

class QoSManager {
 public:
  /// `snapshot` is taken once per round of a ready strategy; what `context` refers to outlives
  /// the manager.
  QoSManager(boost::asio::io_context& io, std::function<StatesSnapshot()> snapshot,
             const FeatureGate& gates, const StrategyContext& context,
             std::span<const StrategySpec> table = koordletStrategies());
  ~QoSManager();
  QoSManager(const QoSManager&) = delete;
  QoSManager& operator=(const QoSManager&) = delete;

  /// Each loop's first round comes one interval after start(), in table order.
  void start();
  void stop();

  /// The strategies built, in table order.
  std::vector<std::string_view> strategies() const;

 private:
  struct Running {
    const StrategySpec* spec;
    std::chrono::milliseconds interval;
    std::unique_ptr<QoSStrategy> strategy;
    std::unique_ptr<PeriodicTask> task;
  };
  std::function<StatesSnapshot()> snapshot_;
  std::vector<Running> running_;
};

}  // namespace qosmanager
}  // namespace koord::roles::koordlet
