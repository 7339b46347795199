#include "koord/kube/json_fields.h"

#include <boost/json.hpp>

#include <fmt/format.h>

#include <cstdint>

#include "koord/kube/time.h"

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

Expected<std::int64_t> intValue(const json::value& v, std::string_view path) {
  if (v.is_int64())
    return v.get_int64();
  if (v.is_uint64()) {
    if (v.get_uint64() > static_cast<std::uint64_t>(INT64_MAX))
      return makeKubeError(fmt::format("{}: {} overflows int64", path, v.get_uint64()));
    return static_cast<std::int64_t>(v.get_uint64());
  }
  return typeError(path, "integer", v);
}

Expected<std::int32_t> int32Value(const json::value& v, std::string_view path) {
  auto i = intValue(v, path);
  if (!i)
    return i.error();
  if (*i < INT32_MIN || *i > INT32_MAX)
    return makeKubeError(fmt::format("{}: {} overflows int32", path, *i));
  return static_cast<std::int32_t>(*i);
}

Expected<std::int64_t> int64Field(const json::object& o, std::string_view name,
                                  std::string_view path) {
  const json::value* v = field(o, name);
  if (v == nullptr)
    return std::int64_t{0};
  return intValue(*v, childPath(path, name));
}

Expected<std::optional<bool>> optionalBoolField(const json::object& o, std::string_view name,
                                                std::string_view path) {
  const json::value* v = field(o, name);
  if (v == nullptr)
    return std::optional<bool>();
  if (!v->is_bool())
    return typeError(childPath(path, name), "boolean", *v);
  return std::optional<bool>(v->get_bool());
}

Expected<bool> boolField(const json::object& o, std::string_view name, std::string_view path) {
  auto b = optionalBoolField(o, name, path);
  if (!b)
    return b.error();
  return b->value_or(false);
}

namespace {

// The array member's elements, each checked by `take` (false: not of the wanted kind).
template <typename T, typename Take>
Expected<std::vector<T>> listField(const json::object& o, std::string_view name,
                                   std::string_view path, std::string_view want, Take&& take) {
  std::vector<T> out;
  const json::value* v = field(o, name);
  if (v == nullptr)
    return out;
  std::string list_path = childPath(path, name);
  if (!v->is_array())
    return typeError(list_path, "array", *v);
  const json::array& items = v->get_array();
  out.reserve(items.size());
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (!take(items[i], out))
      return typeError(indexPath(list_path, i), want, items[i]);
  }
  return out;
}

}  // namespace

Expected<std::vector<std::string>> stringList(const json::object& o, std::string_view name,
                                              std::string_view path) {
  return listField<std::string>(o, name, path, "string",
                                [](const json::value& e, std::vector<std::string>& out) {
                                  if (!e.is_string())
                                    return false;
                                  out.emplace_back(e.get_string());
                                  return true;
                                });
}

Expected<std::vector<const json::object*>> objectList(const json::object& o, std::string_view name,
                                                      std::string_view path) {
  return listField<const json::object*>(
      o, name, path, "object", [](const json::value& e, std::vector<const json::object*>& out) {
        if (!e.is_object())
          return false;
        out.push_back(&e.get_object());
        return true;
      });
}

Expected<std::chrono::system_clock::time_point> timeValue(std::string_view text,
                                                          std::string_view path) {
  if (auto t = parseTime(text))
    return *t;
  return makeKubeError(
      fmt::format("{}: \"{}\" is not an RFC 3339 time (2006-01-02T15:04:05Z07:00)", path, text));
}

Expected<std::optional<std::chrono::system_clock::time_point>> timeField(const json::object& o,
                                                                         std::string_view name,
                                                                         std::string_view path) {
  auto text = stringField(o, name, path);
  if (!text)
    return text.error();
  if (text->empty())
    return std::optional<std::chrono::system_clock::time_point>();
  auto t = timeValue(*text, childPath(path, name));
  if (!t)
    return t.error();
  return std::optional<std::chrono::system_clock::time_point>(*t);
}

}  // namespace koord::kube::jsonfields
