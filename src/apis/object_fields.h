// Field reads the koord_apis projections and annotation parsers share (internal to koord_apis):
// lists bounded by input_limits.h, so no list costs more than its limit, and optional members.
#pragma once

#include <boost/json.hpp>

#include <chrono>
#include <cstddef>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "koord/kube/error.h"
#include "koord/kube/json_fields.h"
#include "koord/kube/labels.h"
#include "koord/kube/quantity.h"

namespace koord::apis::detail {

/// The array member `name` of `o`: nullptr when absent or null, an error naming path.name when
/// it is not an array or holds more than `limit` items.
kube::Expected<const boost::json::array*> boundedArray(const boost::json::object& o,
                                                       std::string_view name, std::string_view path,
                                                       std::size_t limit);

struct StringMember {
  std::string_view name;
  std::string* out;
};
/// Each string member of `o` into its target ("" when absent or null); the first that is not a
/// string is the error, naming path.name.
kube::Expected<void> readStrings(const boost::json::object& o, std::string_view path,
                                 std::initializer_list<StringMember> members);

/// The Go duration string member `name` (spec.ttl); nullopt when absent or null.
kube::Expected<std::optional<std::chrono::nanoseconds>> durationField(const boost::json::object& o,
                                                                      std::string_view name,
                                                                      std::string_view path);

/// The object member `name` as written (a template), copied into the default resource: the
/// source may live in a list decoder's arena, which is rewound for the next item. Null when
/// absent or null.
kube::Expected<std::shared_ptr<const boost::json::value>> objectCopy(const boost::json::object& o,
                                                                     std::string_view name,
                                                                     std::string_view path);

/// The bounded list `name` through one of kube/decode.h's list decoders (decodeTaints,
/// decodeTolerations) into `out`, which stays as it is when the list is absent or null.
template <typename T>
kube::Expected<void> decodeBoundedList(
    const boost::json::object& o, std::string_view name, std::string_view path, std::size_t limit,
    kube::Expected<std::vector<T>> (*decode)(const boost::json::value&, std::string_view),
    std::vector<T>& out) {
  auto items = boundedArray(o, name, path, limit);
  if (!items)
    return items.error();
  if (*items == nullptr)
    return {};
  auto decoded = decode(*kube::jsonfields::field(o, name), kube::jsonfields::childPath(path, name));
  if (!decoded)
    return decoded.error();
  out = std::move(*decoded);
  return {};
}

/// Each object of the bounded list `name` through decode(object, "path.name[i]"); empty when
/// the list is absent or null.
template <typename T, typename Fn>
kube::Expected<std::vector<T>> objectsOf(const boost::json::object& o, std::string_view name,
                                         std::string_view path, std::size_t limit, Fn&& decode) {
  std::vector<T> out;
  auto items = boundedArray(o, name, path, limit);
  if (!items)
    return items.error();
  if (*items == nullptr)
    return out;
  const std::string list_path = kube::jsonfields::childPath(path, name);
  out.reserve((*items)->size());
  for (std::size_t i = 0; i < (*items)->size(); ++i) {
    const boost::json::value& e = (**items)[i];
    const std::string item_path = kube::jsonfields::indexPath(list_path, i);
    if (!e.is_object())
      return kube::jsonfields::typeError(item_path, "object", e);
    kube::Expected<T> item = decode(e.get_object(), item_path);
    if (!item)
      return item.error();
    out.push_back(std::move(*item));
  }
  return out;
}

/// The object member `name` through decode(object, "path.name"); nullopt when absent or null.
template <typename T, typename Fn>
kube::Expected<std::optional<T>> optionalObject(const boost::json::object& o, std::string_view name,
                                                std::string_view path, Fn&& decode) {
  auto member = kube::jsonfields::objectField(o, name, path);
  if (!member)
    return member.error();
  if (*member == nullptr)
    return std::optional<T>();
  kube::Expected<T> decoded = decode(**member, kube::jsonfields::childPath(path, name));
  if (!decoded)
    return decoded.error();
  return std::optional<T>(std::move(*decoded));
}

/// The object member `name` through decode(object, out), which knows its own path; nothing
/// when absent or null.
template <typename T>
kube::Expected<void> decodeMember(const boost::json::object& o, std::string_view name,
                                  std::string_view path,
                                  kube::Expected<void> (*decode)(const boost::json::object&, T&),
                                  T& out) {
  auto member = kube::jsonfields::objectField(o, name, path);
  if (!member)
    return member.error();
  if (*member == nullptr)
    return {};
  return decode(**member, out);
}

/// The resource list member `name` (requests, min, max, used): nullopt when absent or null
/// (a *ResourceList left unset), an error naming path.name when it is not an object, names
/// more than `limit` resources, or holds a bad quantity.
kube::Expected<std::optional<kube::ResourceList>> boundedResourceList(const boost::json::object& o,
                                                                      std::string_view name,
                                                                      std::string_view path,
                                                                      std::size_t limit);

/// The annotation `key` parsed as JSON: nullopt when absent; an error naming the key when its
/// value is longer than `limit` bytes. A value that is not JSON is no error but a value of
/// `syntax_error` set, as Go's json.Unmarshal answers before touching its target.
struct AnnotationJson {
  boost::json::value value;
  bool syntax_error = false;
};
kube::Expected<std::optional<AnnotationJson>> parseAnnotationJson(const kube::Labels& annotations,
                                                                  std::string_view key,
                                                                  std::size_t limit);

/// What Go's json.Unmarshal leaves in a []string: `assigned` is false when `v` is neither an
/// array nor null (the target keeps what it held, and Unmarshal reports a type error); null
/// empties it; an array's elements that are not strings read as "" and set `type_error`
/// (Unmarshal fills the rest and reports the error). An error naming `what` when the array
/// holds more than `max_items`, or a string is longer than `max_item_bytes`.
struct GoStrings {
  std::vector<std::string> items;
  bool assigned = false;
  bool type_error = false;
};
kube::Expected<GoStrings> goStringSlice(const boost::json::value& v, std::string_view what,
                                        std::size_t max_items, std::size_t max_item_bytes);

/// A resource list as Go's json.Marshal writes it: names sorted, each quantity in its canonical
/// form ("1500m", "1Gi").
boost::json::object resourceListJson(const kube::ResourceList& list);

}  // namespace koord::apis::detail
