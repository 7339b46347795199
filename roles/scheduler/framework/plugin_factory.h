// Turns a plugin's typed pieces into a PluginFactory: an args decoder answering Expected<ArgsT>
// (or a shared pointer to one) and a constructor taking std::shared_ptr<const ArgsT> and the
// handle. The one downcast from PluginArgs lives in app::makeTypedFactory, so plugin code has
// neither casts nor std::function plumbing.
#pragma once

#include <boost/json/fwd.hpp>

#include <concepts>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "framework_handle.h"
#include "koord/app/typed_factory.h"
#include "koord/kube/error.h"
#include "plugin.h"
#include "plugin_registry.h"

namespace koord::roles::scheduler {

/// The decoder of a plugin that takes no args: absent, null and {} give nullptr, anything else
/// is an error naming the plugin.
kube::Expected<std::shared_ptr<const PluginArgs>> refuseArgs(const boost::json::value* args,
                                                             std::string_view plugin);

/// `decode(args, api_version)` or `decode(args)` answers kube::Expected<ArgsT> or
/// kube::Expected<std::shared_ptr<const ArgsT>>; `create(std::shared_ptr<const ArgsT>,
/// FrameworkHandle&)` answers a plugin pointer or an Expected of one, and gets null args when
/// the registry is handed none (the plugin's defaults). Args of another type (only a caller
/// bypassing the decoder can pass them) are refused with `wrong_args` as the message.
template <typename ArgsT, typename Decode, typename Create>
PluginFactory makePluginFactory(Decode decode, Create create, std::string wrong_args) {
  return app::makeTypedFactory<PluginFactory, ArgsT>(std::move(decode), std::move(create),
                                                     std::move(wrong_args));
}

/// The same for a plugin built as PluginT(args, handle) where it takes the handle, else as
/// PluginT(args).
template <typename PluginT, typename ArgsT, typename Decode>
requires std::derived_from<PluginT, Plugin> PluginFactory
makePluginFactory(Decode decode, std::string wrong_args) {
  return makePluginFactory<ArgsT>(
      std::move(decode),
      [](std::shared_ptr<const ArgsT> args, FrameworkHandle& handle) {
        if constexpr (std::is_constructible_v<PluginT, std::shared_ptr<const ArgsT>,
                                              FrameworkHandle&>)
          return std::make_shared<PluginT>(std::move(args), handle);
        else
          return std::make_shared<PluginT>(std::move(args));
      },
      std::move(wrong_args));
}

/// A plugin without args: refuses any (refuseArgs) and is built as PluginT(handle) where it
/// takes the handle, else PluginT().
template <typename PluginT>
requires std::derived_from<PluginT, Plugin> PluginFactory makePluginFactory(std::string_view name) {
  PluginFactory f;
  f.decode_args = [name = std::string(name)](const boost::json::value* args, std::string_view) {
    return refuseArgs(args, name);
  };
  f.create = [](std::shared_ptr<const PluginArgs>,
                FrameworkHandle& handle) -> kube::Expected<std::shared_ptr<Plugin>> {
    if constexpr (std::is_constructible_v<PluginT, FrameworkHandle&>)
      return std::shared_ptr<Plugin>(std::make_shared<PluginT>(handle));
    else
      return std::shared_ptr<Plugin>(std::make_shared<PluginT>());
  };
  return f;
}

}  // namespace koord::roles::scheduler
