// Type-checked reads of API JSON for the projections and parsers of every layer: a field lookup
// where null means absent (as Go's decoder sees it), and errors that name the field's path.
#pragma once

#include <boost/json/fwd.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

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

/// `v` as an int64. As Go's decoder, 1.0 and 1e3 are not integers ("<path>: expected integer,
/// got number"); a number past int64 is "<path>: <n> overflows int64".
Expected<std::int64_t> intValue(const boost::json::value& v, std::string_view path);
/// intValue, then int32's range: "<path>: <n> overflows int32".
Expected<std::int32_t> int32Value(const boost::json::value& v, std::string_view path);
/// The integer member; 0 when absent, intValue's errors naming path.name.
Expected<std::int64_t> int64Field(const boost::json::object& o, std::string_view name,
                                  std::string_view path);
/// The boolean member; false when absent, an error naming path.name when not a boolean.
Expected<bool> boolField(const boost::json::object& o, std::string_view name,
                         std::string_view path);
/// As boolField, but nullopt when absent: for strict decoding, which tells unset from false.
Expected<std::optional<bool>> optionalBoolField(const boost::json::object& o, std::string_view name,
                                                std::string_view path);
/// The array member's strings; empty when absent, an error naming path.name or path.name[i].
Expected<std::vector<std::string>> stringList(const boost::json::object& o, std::string_view name,
                                              std::string_view path);
/// The array member's objects; empty when absent, an error naming path.name or path.name[i].
Expected<std::vector<const boost::json::object*>> objectList(const boost::json::object& o,
                                                             std::string_view name,
                                                             std::string_view path);
/// `text` as metav1.Time (RFC 3339, see kube::parseTime); an error naming `path` otherwise.
Expected<std::chrono::system_clock::time_point> timeValue(std::string_view text,
                                                          std::string_view path);
/// The metav1.Time member; nullopt when absent or "", an error naming path.name otherwise.
Expected<std::optional<std::chrono::system_clock::time_point>> timeField(
    const boost::json::object& o, std::string_view name, std::string_view path);

}  // namespace koord::kube::jsonfields
