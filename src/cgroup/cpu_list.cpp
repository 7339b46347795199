#include "koord/cgroup/cpu_topology.h"
#include "text_fields.h"

#include <algorithm>
#include <charconv>
#include <iterator>
#include <optional>
#include <system_error>
#include <utility>

#include <fmt/format.h>

namespace koord::cgroup {

namespace {

using text::trim;

/// One id of a list: digits only (from_chars alone would take a leading '-'), at most kMaxCpuId.
std::optional<int> parseCpuId(std::string_view s) {
  if (s.empty() || !std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return std::nullopt;
  int value = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || end != s.data() + s.size() || value > kMaxCpuId)
    return std::nullopt;
  return value;
}

/// Error messages quote at most this much of the list: it may come from a pod's annotation.
constexpr std::size_t kQuotedBytes = 64;

std::string quoted(std::string_view s) {
  if (s.size() <= kQuotedBytes)
    return fmt::format("{:?}", s);
  return fmt::format("{:?}... ({} bytes)", s.substr(0, kQuotedBytes), s.size());
}

}  // namespace

Expected<std::vector<int>> parseCpuList(std::string_view text) {
  std::vector<int> cpus;
  const std::string_view body = trim(text);
  if (body.empty())
    return cpus;
  if (body.size() > kMaxCpuListBytes)
    return invalidArgument(fmt::format(
        "cpu list {}: longer than {} bytes, more than naming every possible CPU once takes",
        quoted(body), kMaxCpuListBytes));
  // Ranges are merged before they are expanded, so ranges that overlap cost nothing extra: the
  // result never holds more than kMaxCpuId + 1 ids, whatever the list repeats.
  std::vector<std::pair<int, int>> ranges;
  std::size_t pos = 0;
  while (true) {
    const std::size_t comma = body.find(',', pos);
    const std::string_view item =
        body.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos);
    const std::size_t dash = item.find('-');
    std::optional<int> lo, hi;
    if (dash == std::string_view::npos) {
      lo = hi = parseCpuId(item);
    } else {
      lo = parseCpuId(item.substr(0, dash));
      hi = parseCpuId(item.substr(dash + 1));
    }
    if (!lo || !hi)
      return invalidArgument(fmt::format("cpu list {}: bad item {} (want N or N-M, 0 <= N <= {})",
                                         quoted(body), quoted(item), kMaxCpuId));
    if (*lo > *hi)
      return invalidArgument(
          fmt::format("cpu list {}: reversed range {}", quoted(body), quoted(item)));
    ranges.emplace_back(*lo, *hi);
    if (comma == std::string_view::npos)
      break;
    pos = comma + 1;
  }
  std::sort(ranges.begin(), ranges.end());
  int next = 0;  // the lowest id not yet emitted
  for (const auto& [lo, hi] : ranges) {
    for (int c = std::max(lo, next); c <= hi; ++c)
      cpus.push_back(c);
    next = std::max(next, hi + 1);
  }
  return cpus;
}

std::string formatCpuList(std::span<const int> cpus) {
  std::vector<int> sorted(cpus.begin(), cpus.end());
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  std::string out;
  for (std::size_t i = 0; i < sorted.size();) {
    std::size_t j = i;
    while (j + 1 < sorted.size() && sorted[j + 1] == sorted[j] + 1)
      ++j;
    if (!out.empty())
      out += ',';
    if (j == i)
      fmt::format_to(std::back_inserter(out), "{}", sorted[i]);
    else
      fmt::format_to(std::back_inserter(out), "{}-{}", sorted[i], sorted[j]);
    i = j + 1;
  }
  return out;
}

}  // namespace koord::cgroup
