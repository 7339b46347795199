// Type-checked reads of API JSON for the projections and parsers of every layer: a field lookup
// where null means absent (as Go's decoder sees it), and errors that name the field's path.
#pragma once

#include <boost/json/fwd.hpp>

#include <cstddef>
#include <string>
#include <string_view>

#include "koord/kube/error.h"

namespace koord::kube::jsonfields {

/// "null", "boolean", "number", "string", "array" or "object".
std::string_view kindName(const boost::json::value& v);
/// "<path>: expected <want>, got <kind>"; without the path prefix when `path` is empty.
Error typeError(std::string_view path, std::string_view want, const boost::json::value& got);
/// "path.name", or "name" when `path` is empty.
std::string childPath(std::string_view path, std::string_view name);
/// "path[i]".
std::string indexPath(std::string_view path, std::size_t i);
/// The member, or nullptr when it is absent or null.
const boost::json::value* field(const boost::json::object& o, std::string_view name);
/// The object member; nullptr when absent, an error naming path.name when not an object.
Expected<const boost::json::object*> objectField(const boost::json::object& o,
                                                 std::string_view name, std::string_view path);
/// The string member; "" when absent, an error naming path.name when not a string.
Expected<std::string> stringField(const boost::json::object& o, std::string_view name,
                                  std::string_view path);

}  // namespace koord::kube::jsonfields
