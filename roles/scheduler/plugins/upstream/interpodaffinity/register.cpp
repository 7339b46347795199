#include "plugins/upstream/interpodaffinity/register.h"

#include <memory>
#include <string>

#include "framework/plugin_factory.h"
#include "plugins/upstream/interpodaffinity/args.h"
#include "plugins/upstream/interpodaffinity/plugin.h"

namespace koord::roles::scheduler::upstream {

void registerInterPodAffinity(PluginRegistry& registry) {
  using interpodaffinity::InterPodAffinityArgs;
  registry.add(
      std::string(interpodaffinity::kName),
      makePluginFactory<InterPodAffinityArgs>(
          interpodaffinity::decodeInterPodAffinityArgs,
          [](std::shared_ptr<const InterPodAffinityArgs> args,
             FrameworkHandle& handle) -> kube::Expected<std::shared_ptr<Plugin>> {
            if (args == nullptr)
              args = std::make_shared<const InterPodAffinityArgs>();
            if (auto valid = interpodaffinity::validateInterPodAffinityArgs(*args); !valid)
              return valid.error();
            return std::shared_ptr<Plugin>(
                std::make_shared<interpodaffinity::InterPodAffinity>(std::move(args), handle));
          },
          // upstream's words
          "want args to be of type InterPodAffinityArgs"));
}

}  // namespace koord::roles::scheduler::upstream
