#include "metricsadvisor/metrics_advisor.h"

#include <string>

#include "koord/core/feature_gate.h"
#include "koordlet_options.h"
#include "periodic_task.h"
#include "statesinformer/states_snapshot.h"

namespace koord::roles::koordlet::metricsadvisor {

MetricsAdvisor::MetricsAdvisor(boost::asio::io_context& io,
                               std::function<StatesSnapshot()> snapshot, const FeatureGate& gates,
                               const CollectorContext& context,
                               std::span<const CollectorSpec> table)
    : snapshot_(std::move(snapshot)) {
  for (const CollectorSpec& spec : table) {
    if ((!spec.gate.empty() && !gates.enabled(spec.gate)) ||
        (spec.wanted != nullptr && !spec.wanted(context.options)))
      continue;
    Running r{&spec, spec.interval(context.options), spec.make(context), nullptr};
    r.task = std::make_unique<PeriodicTask>(
        io, std::string(spec.name), r.interval, [this, collector = r.collector.get()] {
          collector->collect(snapshot_(), std::chrono::system_clock::now(),
                             std::chrono::steady_clock::now());
        });
    running_.push_back(std::move(r));
  }
}

MetricsAdvisor::~MetricsAdvisor() = default;

void MetricsAdvisor::start() {
  for (auto& r : running_)
    r.task->start(r.interval);
}

void MetricsAdvisor::stop() {
  for (auto& r : running_)
    r.task->stop();
}

std::vector<std::string_view> MetricsAdvisor::collectors() const {
  std::vector<std::string_view> names;
  names.reserve(running_.size());
  for (const auto& r : running_)
    names.push_back(r.spec->name);
  return names;
}

}  // namespace koord::roles::koordlet::metricsadvisor
