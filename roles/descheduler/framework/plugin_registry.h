// The descheduler's plugins by name: how each decodes its args (with its defaults) and how it is
// built on a profile's FrameworkHandle. Plugin code fills an entry with makePluginFactory; the
// table is plugins/in_tree_registry.cpp, as in the scheduler.
#pragma once

#include <boost/json/fwd.hpp>

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "framework/plugin.h"
#include "koord/app/named_registry.h"
#include "koord/app/typed_factory.h"
#include "koord/core/expected.h"

namespace koord::roles::descheduler {

struct PluginFactory {
  // For app::makeTypedFactory.
  using Args = PluginArgs;
  using Product = Plugin;
  using Handle = FrameworkHandle;

  /// `args` is the profile's pluginConfig args as JSON (null: none given, the defaults apply);
  /// `api_version` the configuration's apiVersion. Unknown fields and out-of-range values are
  /// errors naming the field.
  std::function<Expected<std::shared_ptr<const PluginArgs>>(const boost::json::value* args,
                                                            std::string_view api_version)>
      decode_args;
  std::function<Expected<std::shared_ptr<Plugin>>(std::shared_ptr<const PluginArgs> args,
                                                  FrameworkHandle& handle)>
      create;
};

class PluginRegistry : public app::NamedRegistry<PluginFactory> {};

/// `decode(args[, api_version])` answers Expected<ArgsT> (or of a shared pointer to one);
/// `create(std::shared_ptr<const ArgsT>, FrameworkHandle&)` a plugin pointer or an Expected of
/// one; args of another type are refused with `wrong_args` (see app::makeTypedFactory).
template <typename ArgsT, typename Decode, typename Create>
PluginFactory makePluginFactory(Decode decode, Create create, std::string wrong_args) {
  return app::makeTypedFactory<PluginFactory, ArgsT>(std::move(decode), std::move(create),
                                                     std::move(wrong_args));
}

/// One enabled plugin of a profile and its pluginConfig args (null: none).
struct PluginConfig {
  std::string name;
  const boost::json::value* args = nullptr;
};

/// Decodes and builds each configured plugin in order; the first error names its plugin (an
/// unknown name included).
Expected<std::vector<std::shared_ptr<Plugin>>> buildPlugins(
    const PluginRegistry& registry, const std::vector<PluginConfig>& plugins,
    std::string_view api_version, FrameworkHandle& handle);

/// Every descheduler plugin this build carries (plugins/in_tree_registry.cpp).
const PluginRegistry& inTreeRegistry();

}  // namespace koord::roles::descheduler
