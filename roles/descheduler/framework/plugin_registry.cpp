#include "framework/plugin_registry.h"

#include <fmt/format.h>

namespace koord::roles::descheduler {

Expected<std::vector<std::shared_ptr<Plugin>>> buildPlugins(
    const PluginRegistry& registry, const std::vector<PluginConfig>& plugins,
    std::string_view api_version, FrameworkHandle& handle) {
  std::vector<std::shared_ptr<Plugin>> out;
  out.reserve(plugins.size());
  for (const auto& p : plugins) {
    const PluginFactory* factory = registry.find(p.name);
    if (factory == nullptr)
      return invalidArgument(fmt::format("plugin {}: not in this build", p.name));
    auto args = factory->decode_args(p.args, api_version);
    if (!args)
      return invalidArgument(fmt::format("plugin {} args: {}", p.name, args.error().message));
    auto plugin = factory->create(std::move(*args), handle);
    if (!plugin)
      return invalidArgument(fmt::format("plugin {}: {}", p.name, plugin.error().message));
    out.push_back(std::move(*plugin));
  }
  return out;
}

}  // namespace koord::roles::descheduler
