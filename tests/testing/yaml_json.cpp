#include "yaml_json.h"

#include <yaml-cpp/yaml.h>
#include <boost/json.hpp>

#include <charconv>
#include <cmath>
#include <fstream>
#include <limits>
#include <optional>
#include <regex>
#include <sstream>
#include <stdexcept>

namespace koord::testing {
namespace {

namespace json = boost::json;

std::optional<json::value> integerOf(std::string_view s) {
  // YAML 1.2 core: [-+]?[0-9]+, 0o[0-7]+, 0x[0-9a-fA-F]+.
  int base = 10;
  bool negative = false;
  std::string_view digits = s;
  if (s.starts_with("0o")) {
    base = 8;
    digits.remove_prefix(2);
  } else if (s.starts_with("0x")) {
    base = 16;
    digits.remove_prefix(2);
  } else if (!s.empty() && (s.front() == '-' || s.front() == '+')) {
    negative = s.front() == '-';
    digits.remove_prefix(1);
  }
  if (digits.empty())
    return std::nullopt;
  std::uint64_t magnitude = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), magnitude, base);
  if (end != digits.data() + digits.size())
    return std::nullopt;
  if (ec == std::errc::result_out_of_range)
    return json::value(std::stod(std::string(s)));  // too big for 64 bits: a JSON number still
  if (ec != std::errc())
    return std::nullopt;
  if (!negative) {
    if (magnitude <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
      return json::value(static_cast<std::int64_t>(magnitude));
    return json::value(magnitude);
  }
  if (magnitude <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) + 1)
    return json::value(static_cast<std::int64_t>(0 - magnitude));
  return json::value(-static_cast<double>(magnitude));
}

std::optional<json::value> floatOf(const std::string& s) {
  static const std::regex kFloat(R"([-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?)");
  if (std::regex_match(s, kFloat))
    return json::value(std::stod(s));
  // JSON has no infinities or NaN; such a manifest could not be sent as JSON anyway.
  static const std::regex kSpecial(R"([-+]?\.(inf|Inf|INF)|\.(nan|NaN|NAN))");
  if (std::regex_match(s, kSpecial))
    throw std::runtime_error("YAML scalar " + s + " has no JSON form");
  return std::nullopt;
}

json::value plainScalar(const std::string& s) {
  if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL")
    return nullptr;
  if (s == "true" || s == "True" || s == "TRUE")
    return true;
  if (s == "false" || s == "False" || s == "FALSE")
    return false;
  if (auto i = integerOf(s))
    return *i;
  if (auto f = floatOf(s))
    return *f;
  return json::value(s);
}

json::value convert(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Undefined:
    case YAML::NodeType::Null:
      return nullptr;
    case YAML::NodeType::Scalar: {
      const std::string& tag = node.Tag();
      // "?" marks a plain scalar; "!" a quoted or block one; others are explicit tags.
      if (tag == "?")
        return plainScalar(node.Scalar());
      if (tag == "tag:yaml.org,2002:int" || tag == "tag:yaml.org,2002:float" ||
          tag == "tag:yaml.org,2002:bool" || tag == "tag:yaml.org,2002:null") {
        return plainScalar(node.Scalar());
      }
      return json::value(node.Scalar());
    }
    case YAML::NodeType::Sequence: {
      json::array out;
      for (const auto& item : node)
        out.push_back(convert(item));
      return out;
    }
    case YAML::NodeType::Map: {
      json::object out;
      for (const auto& kv : node)
        out[kv.first.Scalar()] = convert(kv.second);
      return out;
    }
  }
  return nullptr;
}

}  // namespace

std::vector<json::value> yamlToJson(std::string_view text) {
  std::vector<YAML::Node> docs;
  try {
    docs = YAML::LoadAll(std::string(text));
  } catch (const YAML::Exception& e) {
    throw std::runtime_error(std::string("malformed YAML: ") + e.what());
  }
  std::vector<json::value> out;
  for (const auto& doc : docs) {
    if (doc.IsNull())
      continue;
    out.push_back(convert(doc));
  }
  return out;
}

std::vector<json::value> yamlFileToJson(const std::string& path) {
  std::ifstream in(path);
  if (!in)
    throw std::runtime_error("cannot read " + path);
  std::ostringstream text;
  text << in.rdbuf();
  try {
    return yamlToJson(text.str());
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(path + ": " + e.what());
  }
}

}  // namespace koord::testing
