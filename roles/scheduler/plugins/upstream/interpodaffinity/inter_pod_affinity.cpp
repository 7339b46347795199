#include "plugins/upstream/interpodaffinity/inter_pod_affinity.h"

#include <boost/json/value.hpp>

#include <memory>
#include <string>

#include "framework/plugin_registry.h"
#include "plugins/upstream/interpodaffinity/args.h"
#include "plugins/upstream/interpodaffinity/plugin.h"

namespace koord::roles::scheduler::upstream {

void registerInterPodAffinity(PluginRegistry& registry) {
  using interpodaffinity::InterPodAffinityArgs;
  PluginFactory factory;
  factory.decode_args =
      [](const boost::json::value* args,
         std::string_view api_version) -> kube::Expected<std::shared_ptr<const PluginArgs>> {
    auto decoded = interpodaffinity::decodeInterPodAffinityArgs(args, api_version);
    if (!decoded)
      return decoded.error();
    return std::shared_ptr<const PluginArgs>(std::move(*decoded));
  };
  factory.create = [](std::shared_ptr<const PluginArgs> args,
                      FrameworkHandle& handle) -> kube::Expected<std::shared_ptr<Plugin>> {
    auto typed = std::dynamic_pointer_cast<const InterPodAffinityArgs>(args);
    if (args != nullptr && typed == nullptr)
      return kube::makeKubeError("want args to be of type InterPodAffinityArgs");
    if (typed == nullptr)
      typed = std::make_shared<const InterPodAffinityArgs>();
    if (auto valid = interpodaffinity::validateInterPodAffinityArgs(*typed); !valid)
      return valid.error();
    return std::shared_ptr<Plugin>(
        std::make_shared<interpodaffinity::InterPodAffinity>(std::move(typed), handle));
  };
  registry.add(std::string(interpodaffinity::kName), std::move(factory));
}

}  // namespace koord::roles::scheduler::upstream
