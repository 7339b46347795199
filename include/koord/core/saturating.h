// int64 arithmetic that sticks at the type's bounds instead of overflowing, for amounts that come
// from pods and nodes: batch-cpu "1E" is 10^18 milli-cores, and a wrapped sum or product turns a
// huge limit into a negative one (to a cgroup, unlimited).
#pragma once

#include <chrono>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace koord {

inline std::int64_t saturatingAdd(std::int64_t a, std::int64_t b) {
  std::int64_t sum = 0;
  if (__builtin_add_overflow(a, b, &sum))
    return b > 0 ? std::numeric_limits<std::int64_t>::max()
                 : std::numeric_limits<std::int64_t>::min();
  return sum;
}

inline std::int64_t saturatingSub(std::int64_t a, std::int64_t b) {
  std::int64_t diff = 0;
  if (__builtin_sub_overflow(a, b, &diff))
    return b < 0 ? std::numeric_limits<std::int64_t>::max()
                 : std::numeric_limits<std::int64_t>::min();
  return diff;
}

inline std::int64_t saturatingMul(std::int64_t a, std::int64_t b) {
  std::int64_t product = 0;
  if (__builtin_mul_overflow(a, b, &product))
    return (a < 0) == (b < 0) ? std::numeric_limits<std::int64_t>::max()
                              : std::numeric_limits<std::int64_t>::min();
  return product;
}

// Time arithmetic on system_clock, whose int64 nanoseconds end in 1677 and 2262: a window of
// seconds from a configuration or an annotation can be centuries long, and wrapping would turn
// "for ever" into "long ago".
static_assert(std::is_same_v<std::chrono::system_clock::duration, std::chrono::nanoseconds>);

inline std::chrono::nanoseconds saturatingSeconds(std::int64_t seconds) {
  return std::chrono::nanoseconds(saturatingMul(seconds, 1'000'000'000));
}

inline std::chrono::system_clock::time_point saturatingAdd(std::chrono::system_clock::time_point t,
                                                           std::chrono::nanoseconds d) {
  return std::chrono::system_clock::time_point(
      std::chrono::nanoseconds(saturatingAdd(t.time_since_epoch().count(), d.count())));
}

inline std::chrono::system_clock::time_point saturatingSub(std::chrono::system_clock::time_point t,
                                                           std::chrono::nanoseconds d) {
  return std::chrono::system_clock::time_point(
      std::chrono::nanoseconds(saturatingSub(t.time_since_epoch().count(), d.count())));
}

/// a - b.
inline std::chrono::nanoseconds saturatingSub(std::chrono::system_clock::time_point a,
                                              std::chrono::system_clock::time_point b) {
  return std::chrono::nanoseconds(
      saturatingSub(a.time_since_epoch().count(), b.time_since_epoch().count()));
}

}  // namespace koord
