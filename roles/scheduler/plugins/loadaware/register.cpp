#include <boost/json/value.hpp>

#include <time.h>

#include <chrono>
#include <memory>
#include <string>

#include "plugins/loadaware/args.h"
#include "plugins/loadaware/load_aware.h"
#include "plugins/loadaware/loadaware.h"

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
  PluginFactory factory;
  factory.decode_args =
      [](const boost::json::value* args,
         std::string_view api_version) -> kube::Expected<std::shared_ptr<const PluginArgs>> {
    auto decoded = loadaware::decodeLoadAwareSchedulingArgs(args, api_version);
    if (!decoded)
      return decoded.error();
    return std::shared_ptr<const PluginArgs>(
        std::make_shared<const loadaware::LoadAwareSchedulingArgs>(std::move(*decoded)));
  };
  factory.create = [](std::shared_ptr<const PluginArgs> args,
                      FrameworkHandle& handle) -> kube::Expected<std::shared_ptr<Plugin>> {
    return loadaware::createLoadAwareScheduling(std::move(args), handle, coarseNow);
  };
  registry.add(std::string(loadaware::kPluginName), std::move(factory));
}

}  // namespace koord::roles::scheduler
