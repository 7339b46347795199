// What the Reservation projection and the reservation annotations' parsers share (internal to
// koord_apis): list reads bounded by input_limits.h, so no list costs more than its limit.
#pragma once

#include <boost/json/fwd.hpp>

#include <cstddef>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "koord/kube/error.h"
#include "koord/kube/json_fields.h"

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

}  // namespace koord::apis::detail
