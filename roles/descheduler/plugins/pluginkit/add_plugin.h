// A plugin's registry entry from its args decoder and its constructor, for each plugin folder's
// register.cpp: the entries differ only in those two and the name.
#pragma once

#include <boost/json/fwd.hpp>

#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "framework/plugin.h"
#include "framework/plugin_registry.h"
#include "koord/core/expected.h"

namespace koord::roles::descheduler::pluginkit {

/// Adds `name` to `r`. `decode(const boost::json::value*)` answers Expected<ArgsT>;
/// `create(std::shared_ptr<const ArgsT>, FrameworkHandle&)` a plugin pointer or an Expected of one,
/// and never gets null args: an entry built without any (the registry skipped decoding) builds
/// from what `decode(nullptr)` makes of none, the defaults or upstream's refusal. Args of another
/// type are refused with "<name>: args are not <name>Args".
template <typename ArgsT, typename Decode, typename Create>
void addPlugin(PluginRegistry& r, std::string_view name, Decode decode, Create create) {
  r.add(std::string(name),
        makePluginFactory<ArgsT>(
            [decode](const boost::json::value* args) { return decode(args); },
            [decode, create](std::shared_ptr<const ArgsT> args,
                             FrameworkHandle& handle) -> Expected<std::shared_ptr<Plugin>> {
              if (!args) {
                auto defaults = decode(nullptr);
                if (!defaults)
                  return defaults.error();
                args = std::make_shared<const ArgsT>(std::move(*defaults));
              }
              auto built = create(std::move(args), handle);
              if constexpr (std::is_convertible_v<decltype(built), std::shared_ptr<Plugin>>) {
                return std::shared_ptr<Plugin>(std::move(built));
              } else {
                if (!built)
                  return built.error();
                return std::shared_ptr<Plugin>(std::move(*built));
              }
            },
            std::string(name) + ": args are not " + std::string(name) + "Args"));
}

}  // namespace koord::roles::descheduler::pluginkit
