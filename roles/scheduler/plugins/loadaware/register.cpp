#include "plugins/loadaware/register.h"

#include <boost/json/value.hpp>

#include <fmt/format.h>

#include <time.h>

#include <chrono>
#include <memory>
#include <string>

#include "framework/declared_informer.h"
#include "framework/plugin_factory.h"
#include "koord/apis/node_metric.h"
#include "plugins/loadaware/args.h"
#include "plugins/loadaware/load_aware.h"

namespace koord::roles::scheduler {

namespace {

// Filter and Score read the clock on every node when PreFilter does not run (Koordinator's own
// profile enables only Filter, Score and Reserve). The coarse clock costs a fraction of a
// precise reading on virtual machines, and NodeMetric expiry (minutes) and estimation windows
// (seconds) do not notice its few milliseconds.
loadaware::TimePoint coarseNow() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME_COARSE, &ts);
  return loadaware::TimePoint(std::chrono::duration_cast<std::chrono::system_clock::duration>(
      std::chrono::seconds(ts.tv_sec) + std::chrono::nanoseconds(ts.tv_nsec)));
}

}  // namespace

void registerLoadAwareScheduling(PluginRegistry& registry) {
  registerLoadAwareScheduling(registry, coarseNow);
}

void registerLoadAwareScheduling(PluginRegistry& registry,
                                 std::function<std::chrono::system_clock::time_point()> now) {
  using loadaware::LoadAwareSchedulingArgs;
  PluginFactory factory = makePluginFactory<LoadAwareSchedulingArgs>(
      loadaware::decodeLoadAwareSchedulingArgs,
      [now = std::move(now)](std::shared_ptr<const LoadAwareSchedulingArgs> args,
                             FrameworkHandle& handle) {
        return loadaware::createLoadAwareScheduling(std::move(args), handle, now);
      },
      fmt::format("{}: want args of type {}", loadaware::kPluginName, loadaware::kArgsKind));
  factory.objects.push_back(declareInformer<apis::NodeMetric>({
      .key = std::string(loadaware::kNodeMetricSource),
      .resource = {"slo.koordinator.sh", "v1alpha1", "nodemetrics", "", "", ""},
      .project = apis::decodeNodeMetric,
      .node_slot = &NodeInfo::node_metric,
  }));
  registry.add(std::string(loadaware::kPluginName), std::move(factory));
}

}  // namespace koord::roles::scheduler
