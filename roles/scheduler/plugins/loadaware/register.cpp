#include <boost/json/value.hpp>

#include <memory>
#include <string>

#include "koord/core/clock.h"
#include "plugins/loadaware/args.h"
#include "plugins/loadaware/load_aware.h"
#include "plugins/loadaware/loadaware.h"

namespace koord::roles::scheduler {

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
    return loadaware::createLoadAwareScheduling(std::move(args), handle,
                                                [] { return Clock::real().now(); });
  };
  registry.add(std::string(loadaware::kPluginName), std::move(factory));
}

}  // namespace koord::roles::scheduler
