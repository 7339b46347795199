#include "top/quantity_text.h"

#include <fmt/format.h>

namespace koord::roles::cli {

std::string cpuText(std::int64_t milli) {
  return fmt::format("{}m", milli);
}

std::string memoryText(std::int64_t bytes) {
  // kubectl top's choice: whole Mi, exact bytes only below one Mi.
  constexpr std::int64_t kMi = 1024 * 1024;
  if (bytes < kMi && bytes > -kMi)
    return fmt::format("{}", bytes);
  return fmt::format("{}Mi", bytes / kMi);
}

std::string ageText(std::chrono::seconds age) {
  const auto s = age.count();
  if (s < 0)
    return "0s";
  if (s < 120)
    return fmt::format("{}s", s);
  if (s < 2 * 3600)
    return fmt::format("{}m", s / 60);
  if (s < 2 * 86400)
    return fmt::format("{}h", s / 3600);
  return fmt::format("{}d", s / 86400);
}

std::string cpuText(const std::optional<std::int64_t>& milli) {
  return milli ? cpuText(*milli) : std::string();
}

std::string memoryText(const std::optional<std::int64_t>& bytes) {
  return bytes ? memoryText(*bytes) : std::string();
}

}  // namespace koord::roles::cli
