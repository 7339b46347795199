// Parsing helpers for the small text files the kernel writes (cgroup files, /proc, sysfs):
// whitespace trimming and whole-string numbers, shared by the cgroup layer's readers.
#pragma once

#include <charconv>
#include <optional>
#include <string_view>

namespace koord::cgroup::text {

inline std::string_view trim(std::string_view s) {
  constexpr std::string_view kSpace = " \t\r\n";
  const auto first = s.find_first_not_of(kSpace);
  if (first == std::string_view::npos)
    return {};
  const auto last = s.find_last_not_of(kSpace);
  return s.substr(first, last - first + 1);
}

/// A decimal number filling all of `s` ("-1" only for signed T; no '+', no spaces).
template <typename T>
std::optional<T> parseNumber(std::string_view s) {
  T value{};
  if (s.empty() || s.front() == '+')
    return std::nullopt;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || end != s.data() + s.size())
    return std::nullopt;
  return value;
}

}  // namespace koord::cgroup::text
