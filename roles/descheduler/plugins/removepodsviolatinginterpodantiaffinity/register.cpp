// RemovePodsViolatingInterPodAntiAffinity's registry entry: its args decoder and its factory.
#include "plugins/removepodsviolatinginterpodantiaffinity/register.h"

#include <memory>
#include <string>

#include "plugins/removepodsviolatinginterpodantiaffinity/args.h"
#include "plugins/removepodsviolatinginterpodantiaffinity/pod_antiaffinity.h"

namespace koord::roles::descheduler {

void registerRemovePodsViolatingInterPodAntiAffinity(PluginRegistry& r) {
  using interpodantiaffinity::RemovePodsViolatingInterPodAntiAffinityArgs;
  r.add(std::string(interpodantiaffinity::kRemovePodsViolatingInterPodAntiAffinityName),
        makePluginFactory<RemovePodsViolatingInterPodAntiAffinityArgs>(
            [](const boost::json::value* args) {
              return interpodantiaffinity::decodeRemovePodsViolatingInterPodAntiAffinityArgs(args);
            },
            [](std::shared_ptr<const RemovePodsViolatingInterPodAntiAffinityArgs> args,
               FrameworkHandle& handle) {
              if (!args)
                args = std::make_shared<const RemovePodsViolatingInterPodAntiAffinityArgs>();
              return interpodantiaffinity::makeRemovePodsViolatingInterPodAntiAffinity(
                  std::move(args), handle);
            },
            "RemovePodsViolatingInterPodAntiAffinity: args are not "
            "RemovePodsViolatingInterPodAntiAffinityArgs"));
}

}  // namespace koord::roles::descheduler
