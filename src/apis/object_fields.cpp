// The out-of-line field reads of object_fields.h.
#include "object_fields.h"

#include <fmt/format.h>

#include "koord/apis/input_limits.h"
#include "koord/core/duration.h"
#include "koord/kube/decode.h"

namespace koord::apis::detail {

namespace json = boost::json;
using namespace koord::kube::jsonfields;
using kube::Expected;
using kube::makeKubeError;

Expected<const json::array*> boundedArray(const json::object& o, std::string_view name,
                                          std::string_view path, std::size_t limit) {
  const json::value* v = field(o, name);
  if (v == nullptr)
    return static_cast<const json::array*>(nullptr);
  std::string list_path = childPath(path, name);
  if (!v->is_array())
    return typeError(list_path, "array", *v);
  if (v->get_array().size() > limit) {
    return makeKubeError(fmt::format("{}: {} items, more than the {} allowed", list_path,
                                     v->get_array().size(), limit));
  }
  return &v->get_array();
}

Expected<void> readStrings(const json::object& o, std::string_view path,
                           std::initializer_list<StringMember> members) {
  for (const StringMember& m : members) {
    auto s = stringField(o, m.name, path);
    if (!s)
      return s.error();
    *m.out = std::move(*s);
  }
  return {};
}

Expected<std::optional<std::chrono::nanoseconds>> durationField(const json::object& o,
                                                                std::string_view name,
                                                                std::string_view path) {
  const json::value* v = field(o, name);
  if (v == nullptr)
    return std::optional<std::chrono::nanoseconds>();
  if (!v->is_string())
    return typeError(childPath(path, name), "duration string", *v);
  auto parsed = parseGoDuration(v->get_string());
  if (!parsed) {
    return makeKubeError(fmt::format("{}: invalid duration \"{}\"", childPath(path, name),
                                     std::string_view(v->get_string())));
  }
  return std::optional<std::chrono::nanoseconds>(*parsed);
}

Expected<std::shared_ptr<const json::value>> objectCopy(const json::object& o,
                                                        std::string_view name,
                                                        std::string_view path) {
  auto member = objectField(o, name, path);
  if (!member)
    return member.error();
  if (*member == nullptr)
    return std::shared_ptr<const json::value>();
  return std::make_shared<const json::value>(json::object(**member, json::storage_ptr()));
}

Expected<std::optional<kube::ResourceList>> boundedResourceList(const json::object& o,
                                                                std::string_view name,
                                                                std::string_view path,
                                                                std::size_t limit) {
  const json::value* v = field(o, name);
  if (v == nullptr)
    return std::optional<kube::ResourceList>();
  const std::string list_path = childPath(path, name);
  if (!v->is_object())
    return typeError(list_path, "object", *v);
  if (v->get_object().size() > limit) {
    return makeKubeError(fmt::format("{}: {} resources, more than the {} allowed", list_path,
                                     v->get_object().size(), limit));
  }
  auto decoded = kube::decodeResourceList(*v, list_path);
  if (!decoded)
    return decoded.error();
  return std::optional<kube::ResourceList>(std::move(*decoded));
}

Expected<std::optional<AnnotationJson>> parseAnnotationJson(const kube::Labels& annotations,
                                                            std::string_view key,
                                                            std::size_t limit) {
  auto it = annotations.find(key);
  if (it == annotations.end())
    return std::optional<AnnotationJson>();
  if (auto size = checkValueSize(key, it->second, limit); !size)
    return size.error();
  AnnotationJson out;
  boost::system::error_code ec;
  out.value = json::parse(it->second, ec);
  if (ec) {
    out.value = nullptr;
    out.syntax_error = true;
  }
  return std::optional<AnnotationJson>(std::move(out));
}

Expected<GoStrings> goStringSlice(const json::value& v, std::string_view what,
                                  std::size_t max_items, std::size_t max_item_bytes) {
  GoStrings out;
  if (v.is_null()) {
    out.assigned = true;
    return out;
  }
  if (!v.is_array()) {
    out.type_error = true;
    return out;
  }
  const json::array& items = v.get_array();
  if (items.size() > max_items) {
    return makeKubeError(
        fmt::format("{}: {} items, more than the {} allowed", what, items.size(), max_items));
  }
  out.assigned = true;
  out.items.reserve(items.size());
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (!items[i].is_string()) {
      // Go leaves a null element at its zero value without complaint.
      out.type_error = out.type_error || !items[i].is_null();
      out.items.emplace_back();
      continue;
    }
    const json::string& s = items[i].get_string();
    if (s.size() > max_item_bytes) {
      return makeKubeError(fmt::format("{}: {} bytes, more than the {} allowed", indexPath(what, i),
                                       s.size(), max_item_bytes));
    }
    out.items.emplace_back(s);
  }
  return out;
}

json::object resourceListJson(const kube::ResourceList& list) {
  json::object out;
  for (const auto& [name, quantity] : list)
    out[name] = quantity.toString();
  return out;
}

}  // namespace koord::apis::detail
