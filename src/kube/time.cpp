#include "koord/kube/time.h"

#include <fmt/format.h>

#include <cstdint>

namespace koord::kube {

using std::chrono::system_clock;

namespace {

std::string formatUtc(system_clock::time_point t, bool micros) {
  using namespace std::chrono;
  const auto us = floor<microseconds>(t);
  const auto day = floor<days>(us);
  const year_month_day ymd{day};
  const hh_mm_ss hms{us - day};
  if (!micros)
    return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z", static_cast<int>(ymd.year()),
                       static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()),
                       hms.hours().count(), hms.minutes().count(), hms.seconds().count());
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:06}Z", static_cast<int>(ymd.year()),
                     static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()),
                     hms.hours().count(), hms.minutes().count(), hms.seconds().count(),
                     hms.subseconds().count());
}

}  // namespace

std::string formatTime(system_clock::time_point t) {
  return formatUtc(t, false);
}

std::string formatMicroTime(system_clock::time_point t) {
  return formatUtc(t, true);
}

namespace {

// Reads exactly n decimal digits at pos.
bool readDigits(std::string_view s, std::size_t& pos, std::size_t n, int& out) {
  if (pos + n > s.size())
    return false;
  out = 0;
  for (std::size_t i = 0; i < n; ++i) {
    char ch = s[pos + i];
    if (ch < '0' || ch > '9')
      return false;
    out = out * 10 + (ch - '0');
  }
  pos += n;
  return true;
}

bool expect(std::string_view s, std::size_t& pos, char ch) {
  if (pos >= s.size() || s[pos] != ch)
    return false;
  ++pos;
  return true;
}

}  // namespace

std::optional<system_clock::time_point> parseTime(std::string_view s) {
  using namespace std::chrono;
  std::size_t pos = 0;
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, sec = 0;
  if (!readDigits(s, pos, 4, y) || !expect(s, pos, '-') || !readDigits(s, pos, 2, mo) ||
      !expect(s, pos, '-') || !readDigits(s, pos, 2, d) || !expect(s, pos, 'T') ||
      !readDigits(s, pos, 2, h) || !expect(s, pos, ':') || !readDigits(s, pos, 2, mi) ||
      !expect(s, pos, ':') || !readDigits(s, pos, 2, sec)) {
    return std::nullopt;
  }
  const year_month_day ymd{year(y), month(static_cast<unsigned>(mo)),
                           day(static_cast<unsigned>(d))};
  if (!ymd.ok() || h > 23 || mi > 59 || sec > 59)
    return std::nullopt;
  std::int64_t micros = 0;
  if (pos < s.size() && s[pos] == '.') {
    ++pos;
    std::size_t digits = 0;
    while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
      if (digits < 6)
        micros = micros * 10 + (s[pos] - '0');
      ++digits;
      ++pos;
    }
    if (digits == 0 || digits > 9)
      return std::nullopt;
    for (std::size_t i = digits; i < 6; ++i)
      micros *= 10;
  }
  minutes offset{0};
  if (pos < s.size() && s[pos] == 'Z') {
    ++pos;
  } else if (pos < s.size() && (s[pos] == '+' || s[pos] == '-')) {
    const bool negative = s[pos] == '-';
    ++pos;
    int oh = 0, om = 0;
    if (!readDigits(s, pos, 2, oh) || !expect(s, pos, ':') || !readDigits(s, pos, 2, om) ||
        oh > 23 || om > 59) {
      return std::nullopt;
    }
    offset = minutes(oh * 60 + om);
    if (negative)
      offset = -offset;
  } else {
    return std::nullopt;
  }
  if (pos != s.size())
    return std::nullopt;
  // Local time minus its offset is UTC. Counted in microseconds first: any four-digit year fits
  // there, while system_clock's int64 nanoseconds end in 1677 and 2262 (Go's Time reaches year
  // 9999), so a time beyond them is refused instead of wrapping into another century.
  const microseconds since_epoch = sys_days(ymd).time_since_epoch() + hours(h) + minutes(mi) +
                                   seconds(sec) + microseconds(micros) - offset;
  if (since_epoch < duration_cast<microseconds>(system_clock::duration::min()) ||
      since_epoch > duration_cast<microseconds>(system_clock::duration::max()))
    return std::nullopt;
  return system_clock::time_point(duration_cast<system_clock::duration>(since_epoch));
}

}  // namespace koord::kube
