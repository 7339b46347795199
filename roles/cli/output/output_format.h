// How an operator command prints what it found: kubectl's -o table (the default), json or yaml.
// The structured forms carry the same figures as the table, unrounded, for scripts.
#pragma once

#include <boost/json/value.hpp>

#include <string>
#include <string_view>

namespace koord::roles::cli {

enum class OutputFormat { kTable, kJson, kYaml };

/// "" and "table" (kubectl's default, also "wide"), "json", "yaml"; std::invalid_argument naming
/// the value otherwise.
OutputFormat parseOutputFormat(std::string_view text);

/// A structured result as kubectl prints it: indented JSON, or YAML; both end in a newline.
std::string formatStructured(const boost::json::value& v, OutputFormat format);

}  // namespace koord::roles::cli
