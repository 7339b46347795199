// KubeSchedulerConfiguration (--config) is YAML the operator writes: YAML to JSON, strict field
// decoding, profiles, plugin sets merged into each apiVersion's defaults, MultiPoint expansion.
// The registry knows every default plugin's name plus two of Koordinator's; their args decoders
// are stand-ins that take any args (the plugins' own decoders live in the plugin libraries,
// which this build leaves out to stay small), so the configuration code itself is what is fuzzed.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

#include "config/default_plugins.h"
#include "config/scheduler_config.h"
#include "framework/plugin_registry.h"

namespace {

using namespace koord::roles::scheduler;
using namespace koord::roles::scheduler::config;

const PluginRegistry& registry() {
  static const PluginRegistry r = [] {
    PluginRegistry out;
    auto add = [&out](const std::string& name) {
      if (out.find(name) != nullptr)
        return;
      out.add(name, PluginFactory{
                        .decode_args = [](const boost::json::value*, std::string_view)
                            -> koord::kube::Expected<std::shared_ptr<const PluginArgs>> {
                          return std::shared_ptr<const PluginArgs>();
                        },
                        .create = nullptr,
                    });
    };
    for (auto version :
         {ApiVersion::kV1beta1, ApiVersion::kV1beta2, ApiVersion::kV1beta3, ApiVersion::kV1}) {
      for (const auto& set : defaultPlugins(version).sets)
        for (const auto& plugin : set.enabled)
          add(plugin.name);
    }
    add("LoadAwareScheduling");
    add("Reservation");
    return out;
  }();
  return r;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  if (auto config = parseSchedulerConfigText(text, registry()))
    (void)describe(*config);
  return 0;
}
