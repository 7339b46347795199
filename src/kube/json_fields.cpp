#include "koord/kube/json_fields.h"

#include <boost/json.hpp>

#include <fmt/format.h>

namespace koord::kube::jsonfields {

namespace json = boost::json;

std::string_view kindName(const json::value& v) {
  switch (v.kind()) {
    case json::kind::null:
      return "null";
    case json::kind::bool_:
      return "boolean";
    case json::kind::int64:
    case json::kind::uint64:
    case json::kind::double_:
      return "number";
    case json::kind::string:
      return "string";
    case json::kind::array:
      return "array";
    case json::kind::object:
      return "object";
  }
  return "value";
}

Error typeError(std::string_view path, std::string_view want, const json::value& got) {
  if (path.empty())
    return makeKubeError(fmt::format("expected {}, got {}", want, kindName(got)));
  return makeKubeError(fmt::format("{}: expected {}, got {}", path, want, kindName(got)));
}

std::string childPath(std::string_view path, std::string_view name) {
  return path.empty() ? std::string(name) : fmt::format("{}.{}", path, name);
}

std::string indexPath(std::string_view path, std::size_t i) {
  return fmt::format("{}[{}]", path, i);
}

const json::value* field(const json::object& o, std::string_view name) {
  const json::value* v = o.if_contains(name);
  return (v == nullptr || v->is_null()) ? nullptr : v;
}

Expected<const json::object*> objectField(const json::object& o, std::string_view name,
                                          std::string_view path) {
  const json::value* v = field(o, name);
  if (v == nullptr)
    return static_cast<const json::object*>(nullptr);
  if (!v->is_object())
    return typeError(childPath(path, name), "object", *v);
  return &v->get_object();
}

Expected<std::string> stringField(const json::object& o, std::string_view name,
                                  std::string_view path) {
  const json::value* v = field(o, name);
  if (v == nullptr)
    return std::string();
  if (!v->is_string())
    return typeError(childPath(path, name), "string", *v);
  return std::string(v->get_string());
}

}  // namespace koord::kube::jsonfields
