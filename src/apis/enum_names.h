// The spellings of the CRDs' enums (phases, modes, policies) both ways, and the string member
// read as one of them (internal to koord_apis).
#pragma once

#include <boost/json/fwd.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "koord/kube/error.h"
#include "koord/kube/json_fields.h"

namespace koord::apis::detail {

/// One spelling of a value; a value spelled twice prints as its first entry.
template <typename E>
struct EnumName {
  E value;
  std::string_view name;
};

/// "?" for a value the table does not spell.
template <typename E, std::size_t N>
std::string_view nameOf(const EnumName<E> (&names)[N], E value) {
  for (const auto& n : names) {
    if (n.value == value)
      return n.name;
  }
  return "?";
}

template <typename E, std::size_t N>
std::optional<E> valueOf(const EnumName<E> (&names)[N], std::string_view name) {
  for (const auto& n : names) {
    if (n.name == name)
      return n.value;
  }
  return std::nullopt;
}

/// The string member `name` as one of `names`; nullopt when it is absent or "" and no entry
/// spells "". Any other spelling is an error listing the supported ones, as the API server's
/// enum validation does.
template <typename E, std::size_t N>
kube::Expected<std::optional<E>> enumField(const boost::json::object& o, std::string_view name,
                                           std::string_view path, const EnumName<E> (&names)[N]) {
  auto text = kube::jsonfields::stringField(o, name, path);
  if (!text)
    return text.error();
  if (auto value = valueOf(names, *text))
    return value;
  if (text->empty())
    return std::optional<E>();
  std::string supported;
  for (const auto& n : names) {
    if (!n.name.empty())
      supported += fmt::format("{}\"{}\"", supported.empty() ? "" : ", ", n.name);
  }
  return kube::makeKubeError(fmt::format("{}: unsupported value \"{}\": supported values: {}",
                                         kube::jsonfields::childPath(path, name), *text,
                                         supported));
}

}  // namespace koord::apis::detail
