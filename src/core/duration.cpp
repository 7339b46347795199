#include "koord/core/duration.h"

#include <fmt/format.h>

#include <cstdint>
#include <limits>

namespace koord {

std::optional<std::chrono::nanoseconds> parseGoDuration(std::string_view s) {
  bool negative = false;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  if (s == "0")
    return std::chrono::nanoseconds(0);
  if (s.empty())
    return std::nullopt;
  // Accumulate in long double: durations up to ~292 years fit int64 nanoseconds, and a fraction
  // such as "1.5h" must not lose precision before the unit multiplies it.
  long double total = 0;
  while (!s.empty()) {
    size_t i = 0;
    long double whole = 0;
    bool digits = false;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
      whole = whole * 10 + (s[i] - '0');
      ++i;
      digits = true;
    }
    long double frac = 0, scale = 1;
    if (i < s.size() && s[i] == '.') {
      ++i;
      while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
        frac = frac * 10 + (s[i] - '0');
        scale *= 10;
        ++i;
        digits = true;
      }
    }
    if (!digits)
      return std::nullopt;
    size_t u = i;
    while (u < s.size() && !(s[u] >= '0' && s[u] <= '9') && s[u] != '.')
      ++u;
    std::string_view unit = s.substr(i, u - i);
    long double mult;
    if (unit == "ns") {
      mult = 1;
    } else if (unit == "us" || unit == "\xC2\xB5s" || unit == "\xCE\xBCs") {
      mult = 1e3L;
    } else if (unit == "ms") {
      mult = 1e6L;
    } else if (unit == "s") {
      mult = 1e9L;
    } else if (unit == "m") {
      mult = 60e9L;
    } else if (unit == "h") {
      mult = 3600e9L;
    } else {
      return std::nullopt;  // Go requires a unit on every component but a bare "0"
    }
    total += (whole + frac / scale) * mult;
    if (total > static_cast<long double>(std::numeric_limits<int64_t>::max()))
      return std::nullopt;
    s.remove_prefix(u);
  }
  auto ns = static_cast<int64_t>(total + 0.5L);
  return std::chrono::nanoseconds(negative ? -ns : ns);
}

namespace {

// Go prints fractions without trailing zeros: 1.5s, 1.000001s.
std::string fixed(uint64_t v, uint64_t unit) {
  uint64_t whole = v / unit, frac = v % unit;
  if (frac == 0)
    return fmt::format("{}", whole);
  int width = 0;
  for (uint64_t u = unit; u > 1; u /= 10)
    ++width;
  std::string f = fmt::format("{:0{}}", frac, width);
  while (!f.empty() && f.back() == '0')
    f.pop_back();
  return fmt::format("{}.{}", whole, f);
}

}  // namespace

std::string formatGoDuration(std::chrono::nanoseconds d) {
  int64_t ns = d.count();
  if (ns == 0)
    return "0s";
  std::string sign = ns < 0 ? "-" : "";
  uint64_t u = ns < 0 ? static_cast<uint64_t>(-(ns + 1)) + 1 : static_cast<uint64_t>(ns);
  if (u < 1000)
    return fmt::format("{}{}ns", sign, u);
  if (u < 1000000)
    return fmt::format("{}{}µs", sign, fixed(u, 1000));
  if (u < 1000000000)
    return fmt::format("{}{}ms", sign, fixed(u, 1000000));
  uint64_t secs_ns = u % 60000000000ULL;
  uint64_t mins = u / 60000000000ULL;
  std::string secs = fixed(secs_ns, 1000000000ULL) + "s";
  if (mins == 0)
    return sign + secs;
  uint64_t hours = mins / 60;
  mins %= 60;
  if (hours == 0)
    return fmt::format("{}{}m{}", sign, mins, secs);
  return fmt::format("{}{}h{}m{}", sign, hours, mins, secs);
}

}  // namespace koord
