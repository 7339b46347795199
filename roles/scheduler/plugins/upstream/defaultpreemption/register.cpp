#include <boost/json/value.hpp>

#include <random>

#include "framework/plugin_registry.h"
#include "plugins/upstream/defaultpreemption/default_preemption.h"

namespace koord::roles::scheduler::upstream {

void registerDefaultPreemption(PluginRegistry& registry) {
  PluginFactory factory;
  factory.decode_args = [](const boost::json::value* args,
                           std::string_view) -> kube::Expected<std::shared_ptr<const PluginArgs>> {
    auto decoded = decodeDefaultPreemptionArgs(args);
    if (!decoded)
      return decoded.error();
    return std::shared_ptr<const PluginArgs>(std::move(*decoded));
  };
  factory.create = [](std::shared_ptr<const PluginArgs> args,
                      FrameworkHandle& handle) -> kube::Expected<std::shared_ptr<Plugin>> {
    auto typed = std::dynamic_pointer_cast<const DefaultPreemptionArgs>(args);
    if (args && !typed)
      return kube::makeKubeError("DefaultPreemption: args are not DefaultPreemptionArgs");
    return std::make_shared<DefaultPreemption>(std::move(typed), handle, std::random_device{}());
  };
  registry.add(std::string(kDefaultPreemptionName), std::move(factory));
}

}  // namespace koord::roles::scheduler::upstream
