// RemovePodsViolatingInterPodAntiAffinity's registry entry: its args decoder and its factory.
#include "plugins/removepodsviolatinginterpodantiaffinity/register.h"

#include "plugins/pluginkit/add_plugin.h"
#include "plugins/removepodsviolatinginterpodantiaffinity/args.h"
#include "plugins/removepodsviolatinginterpodantiaffinity/pod_antiaffinity.h"

namespace koord::roles::descheduler {

void registerRemovePodsViolatingInterPodAntiAffinity(PluginRegistry& r) {
  using namespace interpodantiaffinity;
  pluginkit::addPlugin<RemovePodsViolatingInterPodAntiAffinityArgs>(
      r, kRemovePodsViolatingInterPodAntiAffinityName,
      decodeRemovePodsViolatingInterPodAntiAffinityArgs,
      makeRemovePodsViolatingInterPodAntiAffinity);
}

}  // namespace koord::roles::descheduler
