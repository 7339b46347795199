// JSON values written as block YAML, the way kubectl -o yaml lays them out, for the operator
// commands' structured output. Strings that YAML would read as something else are quoted.
#pragma once

#include <boost/json/value.hpp>

#include <string>

namespace koord::roles::cli {

/// Block mappings and sequences (kubectl's style: a sequence under a key is not indented), flow
/// `{}` and `[]` when empty. What kube::yamlToJson reads back is the same value.
std::string toYaml(const boost::json::value& v);

}  // namespace koord::roles::cli
