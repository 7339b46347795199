#include "output/output_format.h"

#include <fmt/format.h>

#include <boost/json/serialize.hpp>

#include <stdexcept>

#include "output/yaml_writer.h"

namespace koord::roles::cli {
namespace {

void indentedJson(const boost::json::value& v, int depth, std::string& out) {
  const std::string pad(static_cast<std::size_t>(depth + 1) * 4, ' ');
  const std::string close(static_cast<std::size_t>(depth) * 4, ' ');
  if (v.is_object() && !v.get_object().empty()) {
    out += "{\n";
    bool first = true;
    for (const auto& [key, value] : v.get_object()) {
      if (!first)
        out += ",\n";
      first = false;
      out += pad + boost::json::serialize(boost::json::value(key)) + ": ";
      indentedJson(value, depth + 1, out);
    }
    out += "\n" + close + "}";
    return;
  }
  if (v.is_array() && !v.get_array().empty()) {
    out += "[\n";
    bool first = true;
    for (const auto& item : v.get_array()) {
      if (!first)
        out += ",\n";
      first = false;
      out += pad;
      indentedJson(item, depth + 1, out);
    }
    out += "\n" + close + "]";
    return;
  }
  out += boost::json::serialize(v);
}

}  // namespace

OutputFormat parseOutputFormat(std::string_view text) {
  if (text.empty() || text == "table" || text == "wide")
    return OutputFormat::kTable;
  if (text == "json")
    return OutputFormat::kJson;
  if (text == "yaml")
    return OutputFormat::kYaml;
  throw std::invalid_argument(
      fmt::format("--output {:?}: unknown format; use table, json or yaml", text));
}

std::string formatStructured(const boost::json::value& v, OutputFormat format) {
  if (format == OutputFormat::kYaml)
    return toYaml(v);
  std::string out;
  indentedJson(v, 0, out);
  out += '\n';
  return out;
}

}  // namespace koord::roles::cli
