// How the operator commands print figures in tables: CPU in milli-cores ("1500m"), memory in
// binary units ("512Mi"), ages as kubectl does ("45s", "3m", "2h", "5d").
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace koord::roles::cli {

std::string cpuText(std::int64_t milli);
std::string memoryText(std::int64_t bytes);
std::string ageText(std::chrono::seconds age);
/// "" (printed "<none>") for nullopt.
std::string cpuText(const std::optional<std::int64_t>& milli);
std::string memoryText(const std::optional<std::int64_t>& bytes);

}  // namespace koord::roles::cli
