// A profile's `plugins` and `pluginConfig` read strictly against the plugin registry, and each
// plugin's args decoded through its factory.
#pragma once

#include <boost/json/fwd.hpp>

#include <string_view>
#include <vector>

#include "framework/plugin_registry.h"
#include "koord/kube/error.h"
#include "plugin_set.h"
#include "scheduler_config.h"

namespace koord::roles::scheduler::config {

/// profile.plugins as written: keys the apiVersion has, enabled names in the registry (no
/// duplicates, weights not negative), disabled names "*", registered or upstream in-tree ones.
kube::Expected<Plugins> parsePlugins(const boost::json::object& profile,
                                     std::string_view profile_path, ApiVersion version,
                                     const PluginRegistry& registry);
/// profile.pluginConfig as written: registered names, each once.
kube::Expected<std::vector<PluginConfigEntry>> parsePluginConfig(const boost::json::object& profile,
                                                                 std::string_view profile_path,
                                                                 const PluginRegistry& registry);
/// Fills profile.args: each pluginConfig entry's args (TypeMeta checked and removed) through
/// decode_args, then every plugin enabled in profile.merged without one, from null.
kube::Expected<void> decodeProfileArgs(Profile& profile, std::string_view file_version,
                                       const PluginRegistry& registry);

}  // namespace koord::roles::scheduler::config
