// Reading an args member that is an object of a shape of its own (thresholds, resourceWeights, a
// priorityThreshold, an anomalyCondition): absent or null is unset, any other type refused.
#pragma once

#include <boost/json/fwd.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "koord/core/expected.h"
#include "koord/kube/json_fields.h"
#include "koord/kube/strict_fields.h"

namespace koord::roles::descheduler::pluginkit {

/// `read(member, member_path)`, answering Expected<T>, on the object member `name` of `o` (`path`
/// being the path of `o`); nullopt when the member is absent or null.
template <typename T, typename Read>
Expected<std::optional<T>> objectMember(const boost::json::object& o, std::string_view name,
                                        std::string_view path, Read&& read) {
  auto obj = kube::strict::objectField(o, name, path);
  if (!obj)
    return obj.error();
  if (*obj == nullptr)
    return std::optional<T>();
  auto value = read(**obj, kube::jsonfields::childPath(path, name));
  if (!value)
    return value.error();
  return std::optional<T>(std::move(*value));
}

}  // namespace koord::roles::descheduler::pluginkit
