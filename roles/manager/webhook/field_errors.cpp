#include "webhook/field_errors.h"

#include <boost/json.hpp>

#include <algorithm>

#include <fmt/format.h>

namespace koord::manager::webhook {
namespace {

// Go prints the bad value with %q: quoted, with Go's escapes for what is not printable.
std::string quoted(std::string_view s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (c < 0x20 || c == 0x7f)
          out += fmt::format("\\x{:02x}", c);
        else
          out += static_cast<char>(c);
    }
  }
  out += '"';
  return out;
}

}  // namespace

std::string required(std::string_view path, std::string_view detail) {
  return fmt::format("{}: Required value: {}", path, detail);
}

std::string forbidden(std::string_view path, std::string_view detail) {
  return fmt::format("{}: Forbidden: {}", path, detail);
}

std::string invalid(std::string_view path, std::string_view value, std::string_view detail) {
  return fmt::format("{}: Invalid value: {}: {}", path, quoted(value), detail);
}

std::string invalidValue(std::string_view path, const boost::json::value& value,
                         std::string_view detail) {
  if (const auto* s = value.if_string())
    return invalid(path, *s, detail);
  return fmt::format("{}: Invalid value: {}: {}", path, boost::json::serialize(value), detail);
}

std::string aggregateMessages(const std::vector<std::string>& messages) {
  std::vector<std::string_view> unique;
  for (const auto& m : messages) {
    if (std::find(unique.begin(), unique.end(), m) == unique.end())
      unique.push_back(m);
  }
  if (unique.size() == 1)
    return std::string(unique.front());
  std::string out = "[";
  for (std::size_t i = 0; i < unique.size(); ++i) {
    if (i > 0)
      out += ", ";
    out += unique[i];
  }
  out += "]";
  return out;
}

AdmissionResponse answerInvalid(const kube::Expected<std::vector<std::string>>& errors) {
  if (!errors)
    return AdmissionResponse::errored(400, errors.error().message);
  if (errors->empty())
    return AdmissionResponse::allow();
  return AdmissionResponse::errored(400, aggregateMessages(*errors));
}

}  // namespace koord::manager::webhook
