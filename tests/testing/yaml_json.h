// YAML (multi-document, as kubectl applies it) to Boost.JSON values, so tests can send what
// deploy/ ships to the real apiserver exactly as an operator's kubectl would.
#pragma once

#include <boost/json/value.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace koord::testing {

/// Every non-empty document of `text`, in order. Plain scalars are typed by YAML 1.2's core
/// schema (null, true/false, integers, floats, else strings); quoted and block scalars, and
/// those tagged !!str, stay strings; map keys are strings. Aliases are expanded. Throws
/// std::runtime_error saying where, on malformed YAML.
std::vector<boost::json::value> yamlToJson(std::string_view text);

/// yamlToJson of a file's content; throws std::runtime_error when it cannot be read.
std::vector<boost::json::value> yamlFileToJson(const std::string& path);

}  // namespace koord::testing
