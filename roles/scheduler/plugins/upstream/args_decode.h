// Strict reading of the upstream plugins' pluginConfig args, as kube-scheduler's strict decoder
// reads them: an unknown field, a wrong type or a bad value is an error naming the field's path.
#pragma once

#include <boost/json/fwd.hpp>

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "framework/plugin.h"
#include "koord/kube/error.h"

namespace koord::roles::scheduler::upstream {

/// kubescheduler.config.k8s.io/v1beta1 (or an older alpha): the args shapes of kube-scheduler
/// 1.20. Every other version, an empty one included, gets the v1beta2+ shapes.
bool isV1beta1OrOlder(std::string_view api_version);

/// The args as an object; nullptr when absent or JSON null (the defaults apply).
kube::Expected<const boost::json::object*> argsObject(const boost::json::value* args);

/// Fails on the first member of `o` whose name is not in `known` ("path.name: unknown field").
kube::Expected<void> checkKnownFields(const boost::json::object& o,
                                      std::initializer_list<std::string_view> known,
                                      std::string_view path);

/// The decode_args of a plugin that takes no args: absent, null and {} give nullptr, anything
/// else is an error naming the plugin.
kube::Expected<std::shared_ptr<const PluginArgs>> refuseArgs(const boost::json::value* args,
                                                             std::string_view plugin);

/// An integer (Go refuses 1.0 for an int field, so do we).
kube::Expected<std::int64_t> intValue(const boost::json::value& v, std::string_view path);
/// A list of strings; null is an empty list.
kube::Expected<std::vector<std::string>> stringList(const boost::json::value& v,
                                                    std::string_view path);

}  // namespace koord::roles::scheduler::upstream
