// Plugins by name: how each decodes its pluginConfig args (with its defaults) and how it is
// built. A profile enables plugins from here; a name not here is a startup error.
#pragma once

#include <boost/json/fwd.hpp>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "koord/kube/error.h"
#include "plugin.h"

namespace koord::roles::scheduler {

class FrameworkHandle;

struct PluginFactory {
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
};

class PluginRegistry {
 public:
  /// Throws std::logic_error on a duplicate name (a programming error).
  void add(std::string name, PluginFactory factory);
  const PluginFactory* find(std::string_view name) const;
  std::vector<std::string> names() const;

 private:
  std::map<std::string, PluginFactory, std::less<>> factories_;
};

/// Upstream's default plugins and Koordinator's, as this build has them.
const PluginRegistry& inTreeRegistry();

}  // namespace koord::roles::scheduler
