#include "koord/kube/strict_fields.h"

#include <boost/json.hpp>

#include <fmt/format.h>

#include <limits>

#include "koord/core/duration.h"
#include "koord/kube/json_fields.h"

namespace koord::kube::strict {
namespace {

namespace json = boost::json;
namespace jf = kube::jsonfields;

template <typename Int>
kube::Expected<std::optional<Int>> integerField(const json::object& o, std::string_view name,
                                                std::string_view path, std::string_view type) {
  const json::value* v = jf::field(o, name);
  if (v == nullptr)
    return std::optional<Int>();
  const std::string where = jf::childPath(path, name);
  constexpr auto kMin = static_cast<std::int64_t>(std::numeric_limits<Int>::min());
  constexpr auto kMax = static_cast<std::int64_t>(std::numeric_limits<Int>::max());
  if (v->is_int64()) {
    const std::int64_t i = v->get_int64();
    if (i < kMin || i > kMax)
      return fieldError(where, fmt::format("{} is out of range for {}", i, type));
    return std::optional<Int>(static_cast<Int>(i));
  }
  if (v->is_uint64())
    return fieldError(where, fmt::format("{} is out of range for {}", v->get_uint64(), type));
  if (v->is_double())
    return fieldError(where, fmt::format("expected an integer, got {}", v->get_double()));
  return jf::typeError(where, "integer", *v);
}

}  // namespace

kube::Error fieldError(std::string_view path, std::string_view message) {
  if (path.empty())
    return kube::makeKubeError(std::string(message));
  return kube::makeKubeError(fmt::format("{}: {}", path, message));
}

kube::Expected<void> rejectUnknownFields(const json::object& o,
                                         std::initializer_list<std::string_view> known,
                                         std::string_view path) {
  for (const auto& member : o) {
    const std::string_view name(member.key().data(), member.key().size());
    bool found = false;
    for (std::string_view k : known) {
      if (name == k) {
        found = true;
        break;
      }
    }
    if (!found)
      return fieldError(path, fmt::format("unknown field {:?}", name));
  }
  return {};
}

kube::Expected<std::optional<std::int32_t>> int32Field(const json::object& o, std::string_view name,
                                                       std::string_view path) {
  return integerField<std::int32_t>(o, name, path, "int32");
}

kube::Expected<std::optional<std::int64_t>> int64Field(const json::object& o, std::string_view name,
                                                       std::string_view path) {
  return integerField<std::int64_t>(o, name, path, "int64");
}

kube::Expected<std::optional<double>> numberField(const json::object& o, std::string_view name,
                                                  std::string_view path) {
  const json::value* v = jf::field(o, name);
  if (v == nullptr)
    return std::optional<double>();
  if (!v->is_number())
    return jf::typeError(jf::childPath(path, name), "number", *v);
  return std::optional<double>(v->to_number<double>());
}

kube::Expected<std::optional<bool>> boolField(const json::object& o, std::string_view name,
                                              std::string_view path) {
  return jf::optionalBoolField(o, name, path);
}

kube::Expected<std::optional<std::string>> stringField(const json::object& o, std::string_view name,
                                                       std::string_view path) {
  const json::value* v = jf::field(o, name);
  if (v == nullptr)
    return std::optional<std::string>();
  if (!v->is_string())
    return jf::typeError(jf::childPath(path, name), "string", *v);
  return std::optional<std::string>(std::string(v->get_string()));
}

kube::Expected<std::optional<std::chrono::nanoseconds>> durationField(const json::object& o,
                                                                      std::string_view name,
                                                                      std::string_view path) {
  auto text = stringField(o, name, path);
  if (!text)
    return text.error();
  if (!*text)
    return std::optional<std::chrono::nanoseconds>();
  auto d = parseGoDuration(**text);
  if (!d) {
    return fieldError(
        jf::childPath(path, name),
        fmt::format("invalid duration {:?} (want Go syntax such as \"15s\")", **text));
  }
  return std::optional<std::chrono::nanoseconds>(*d);
}

kube::Expected<const json::array*> arrayField(const json::object& o, std::string_view name,
                                              std::string_view path) {
  const json::value* v = jf::field(o, name);
  if (v == nullptr)
    return static_cast<const json::array*>(nullptr);
  if (!v->is_array())
    return jf::typeError(jf::childPath(path, name), "array", *v);
  return &v->get_array();
}

kube::Expected<const json::object*> objectField(const json::object& o, std::string_view name,
                                                std::string_view path) {
  return jf::objectField(o, name, path);
}

kube::Expected<const json::object*> asObject(const json::value& v, std::string_view path) {
  if (!v.is_object())
    return jf::typeError(path, "object", v);
  return &v.get_object();
}

}  // namespace koord::kube::strict
