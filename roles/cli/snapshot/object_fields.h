// Reads of a recorded object's plain string fields that never fail: a snapshot's objects are
// checked for names when read, and a missing or mistyped field is simply empty here.
#pragma once

#include <boost/json/value.hpp>

#include <string_view>

namespace koord::roles::cli {

/// o[key] when it is a string, else "". `o` may be null.
inline std::string_view stringField(const boost::json::object* o, std::string_view key) {
  if (o == nullptr)
    return {};
  const boost::json::value* v = o->if_contains(key);
  return v && v->is_string() ? std::string_view(v->get_string()) : std::string_view();
}

/// o[key] when it is an object, else null.
inline const boost::json::object* objectField(const boost::json::object* o, std::string_view key) {
  if (o == nullptr)
    return nullptr;
  const boost::json::value* v = o->if_contains(key);
  return v && v->is_object() ? &v->get_object() : nullptr;
}

/// metadata.<key> of an object ("name", "namespace"); "" when absent or `item` is no object.
inline std::string_view metaString(const boost::json::value& item, std::string_view key) {
  return item.is_object() ? stringField(objectField(&item.get_object(), "metadata"), key)
                          : std::string_view();
}

}  // namespace koord::roles::cli
