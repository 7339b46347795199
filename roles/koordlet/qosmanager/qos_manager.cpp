#include "qosmanager/qos_manager.h"

#include <string>

#include "koord/core/feature_gate.h"
#include "koordlet_options.h"
#include "periodic_task.h"
#include "statesinformer/states_snapshot.h"

namespace koord::roles::koordlet::qosmanager {

QoSManager::QoSManager(boost::asio::io_context& io, std::function<StatesSnapshot()> snapshot,
                       const FeatureGate& gates, const StrategyContext& context,
                       std::span<const StrategySpec> table)
    : snapshot_(std::move(snapshot)) {
  for (const StrategySpec& spec : table) {
    if (!gates.enabled(spec.gate))
      continue;
    Running r{&spec, spec.interval(context.options), spec.make(context), nullptr};
    r.task = std::make_unique<PeriodicTask>(
        io, std::string(spec.name), r.interval, [this, strategy = r.strategy.get()] {
          if (strategy->ready())
            strategy->runOnce(snapshot_(), std::chrono::system_clock::now());
        });
    running_.push_back(std::move(r));
  }
}

QoSManager::~QoSManager() = default;

void QoSManager::start() {
  for (auto& r : running_)
    r.task->start(r.interval);
}

void QoSManager::stop() {
  for (auto& r : running_)
    r.task->stop();
}

std::vector<std::string_view> QoSManager::strategies() const {
  std::vector<std::string_view> names;
  names.reserve(running_.size());
  for (const auto& r : running_)
    names.push_back(r.spec->name);
  return names;
}

}  // namespace koord::roles::koordlet::qosmanager
