// The nodeutilization plugins' registry entries: args decoders and factories.
#include "plugins/nodeutilization/register.h"

#include <memory>
#include <utility>

#include "plugins/nodeutilization/args.h"
#include "plugins/nodeutilization/node_utilization.h"
#include "plugins/pluginkit/add_plugin.h"

namespace koord::roles::descheduler {

namespace {

// The thresholds have no default: an entry built without args gets the decoder's refusal.
template <typename PluginT>
auto construct() {
  return [](auto args, FrameworkHandle& handle) {
    return std::make_shared<PluginT>(std::move(args), handle);
  };
}

}  // namespace

void registerLowNodeUtilization(PluginRegistry& r) {
  using namespace nodeutilization;
  pluginkit::addPlugin<LowNodeUtilizationArgs>(
      r, kLowNodeUtilizationName, decodeLowNodeUtilizationArgs, construct<LowNodeUtilization>());
}

void registerHighNodeUtilization(PluginRegistry& r) {
  using namespace nodeutilization;
  pluginkit::addPlugin<HighNodeUtilizationArgs>(
      r, kHighNodeUtilizationName, decodeHighNodeUtilizationArgs, construct<HighNodeUtilization>());
}

}  // namespace koord::roles::descheduler
