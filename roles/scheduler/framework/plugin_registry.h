// Plugins by name: how each decodes its pluginConfig args (with its defaults), how it is built
// and which objects it reads. A profile enables plugins from here; a name not here is a startup
// error. Plugin code fills a PluginFactory with makePluginFactory (plugin_factory.h).
#pragma once

#include <boost/json/fwd.hpp>

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "declared_object.h"
#include "koord/app/named_registry.h"
#include "koord/kube/error.h"
#include "plugin.h"

namespace koord::roles::scheduler {

class FrameworkHandle;

struct PluginFactory {
  // For app::makeTypedFactory.
  using Args = PluginArgs;
  using Product = Plugin;
  using Handle = FrameworkHandle;

  /// `args` is the pluginConfig entry's args as JSON (null: none given, the defaults apply);
  /// `api_version` the configuration's apiVersion (some defaults differ by version). Unknown
  /// fields and out-of-range values are errors naming the field. A plugin without args answers
  /// nullptr and refuses non-empty args.
  std::function<kube::Expected<std::shared_ptr<const PluginArgs>>(const boost::json::value* args,
                                                                  std::string_view api_version)>
      decode_args;
  std::function<kube::Expected<std::shared_ptr<Plugin>>(std::shared_ptr<const PluginArgs> args,
                                                        FrameworkHandle& handle)>
      create;
  /// Kinds the plugin reads beyond pods and nodes (declareInformer, declared_informer.h).
  std::vector<ObjectDeclaration> objects;
};

class PluginRegistry : public app::NamedRegistry<PluginFactory> {
 public:
  /// Every plugin's declared kinds, one per key (of plugins declaring the same key, the first
  /// by name).
  std::vector<const ObjectDeclaration*> objects() const;
};

/// Upstream's default plugins and Koordinator's, as this build has them.
const PluginRegistry& inTreeRegistry();

}  // namespace koord::roles::scheduler
