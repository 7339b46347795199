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
#include "framework/plugin_factory.h"  // refuseArgs, for the plugins without args
#include "koord/kube/error.h"
#include "koord/kube/json_fields.h"

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

/// An integer (Go refuses 1.0 for an int field, so do we).
using kube::jsonfields::intValue;
/// A list of strings; null is an empty list.
kube::Expected<std::vector<std::string>> stringList(const boost::json::value& v,
                                                    std::string_view path);

}  // namespace koord::roles::scheduler::upstream
