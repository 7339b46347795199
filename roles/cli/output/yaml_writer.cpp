#include "output/yaml_writer.h"

#include <fmt/format.h>
#include <boost/json/serialize.hpp>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdint>
#include <string_view>

namespace koord::roles::cli {
namespace {

// Words go-yaml v2 resolves to a bool or null: they must stay strings.
constexpr std::array<std::string_view, 23> kReserved = {
    "y",    "Y",     "yes",   "Yes",   "YES", "n",  "N",  "no",  "No",  "NO",  "true", "True",
    "TRUE", "false", "False", "FALSE", "on",  "On", "ON", "off", "Off", "OFF", "null"};

bool looksNumeric(std::string_view s) {
  // Anything starting like a number (digits, sign, dot) may resolve as int or float: quote it.
  const char c = s.front();
  return std::isdigit(static_cast<unsigned char>(c)) || c == '-' || c == '+' || c == '.';
}

bool needsQuotes(std::string_view s) {
  if (s.empty() || s == "~" || s == "Null" || s == "NULL")
    return true;
  if (std::find(kReserved.begin(), kReserved.end(), s) != kReserved.end())
    return true;
  if (looksNumeric(s))
    return true;
  // Indicators that start a YAML token, and leading or trailing space.
  if (std::string_view("!&*-:?{}[],#|>@`\"'%").find(s.front()) != std::string_view::npos)
    return true;
  if (s.front() == ' ' || s.back() == ' ')
    return true;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    // Control characters, and anything past ASCII: YAML takes some code points (NEL, the line
    // and paragraph separators, a BOM) for breaks, so those are written as escapes.
    if (c < 0x20 || c >= 0x7f)
      return true;
    if (s[i] == ':' && (i + 1 == s.size() || s[i + 1] == ' '))
      return true;
    if (s[i] == '#' && i > 0 && s[i - 1] == ' ')
      return true;
  }
  return false;
}

// A YAML double-quoted scalar with every byte outside printable ASCII escaped (\uXXXX,
// \UXXXXXXXX from the UTF-8, which boost::json has already validated).
void quoted(std::string_view s, std::string& out) {
  out += '"';
  for (std::size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
      ++i;
    } else if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
      ++i;
    } else if (c < 0x80) {
      out += fmt::format("\\x{:02x}", c);
      ++i;
    } else {
      const int length = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2;
      std::uint32_t cp = c & (length == 4 ? 0x07 : length == 3 ? 0x0f : 0x1f);
      for (int k = 1; k < length && i + static_cast<std::size_t>(k) < s.size(); ++k)
        cp = (cp << 6) | (static_cast<unsigned char>(s[i + static_cast<std::size_t>(k)]) & 0x3f);
      out += cp > 0xffff ? fmt::format("\\U{:08x}", cp) : fmt::format("\\u{:04x}", cp);
      i += static_cast<std::size_t>(length);
    }
  }
  out += '"';
}

void scalar(const boost::json::value& v, std::string& out) {
  if (v.is_string()) {
    std::string_view s = v.get_string();
    if (needsQuotes(s))
      quoted(s, out);
    else
      out += s;
    return;
  }
  if (v.is_double()) {
    // Boost writes 1.5E0, which YAML 1.1 (an exponent needs a sign) reads as a string.
    out += fmt::format("{}", v.get_double());
    return;
  }
  out += boost::json::serialize(v);
}

bool isBlock(const boost::json::value& v) {
  return (v.is_object() && !v.get_object().empty()) || (v.is_array() && !v.get_array().empty());
}

void write(const boost::json::value& v, std::size_t indent, std::string& out);

void writeKey(std::string_view key, std::string& out) {
  if (needsQuotes(key))
    quoted(key, out);
  else
    out += key;
}

void writeObject(const boost::json::object& o, std::size_t indent, std::string& out,
                 bool first_inline) {
  bool first = true;
  for (const auto& [key, value] : o) {
    if (!(first && first_inline))
      out.append(indent, ' ');
    first = false;
    writeKey(key, out);
    out += ':';
    if (value.is_object() && !value.get_object().empty()) {
      out += '\n';
      writeObject(value.get_object(), indent + 2, out, false);
    } else if (value.is_array() && !value.get_array().empty()) {
      out += '\n';
      write(value, indent, out);
    } else {
      out += ' ';
      write(value, indent, out);
    }
  }
}

void write(const boost::json::value& v, std::size_t indent, std::string& out) {
  if (v.is_object()) {
    if (v.get_object().empty()) {
      out += "{}\n";
      return;
    }
    writeObject(v.get_object(), indent, out, false);
    return;
  }
  if (v.is_array()) {
    if (v.get_array().empty()) {
      out += "[]\n";
      return;
    }
    for (const auto& item : v.get_array()) {
      out.append(indent, ' ');
      out += "- ";
      if (item.is_object() && !item.get_object().empty()) {
        writeObject(item.get_object(), indent + 2, out, true);
      } else if (isBlock(item)) {
        out += '\n';
        write(item, indent + 2, out);
      } else {
        write(item, indent + 2, out);
      }
    }
    return;
  }
  scalar(v, out);
  out += '\n';
}

}  // namespace

std::string toYaml(const boost::json::value& v) {
  std::string out;
  write(v, 0, out);
  return out;
}

}  // namespace koord::roles::cli
