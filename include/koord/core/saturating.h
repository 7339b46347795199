// int64 arithmetic that sticks at the type's bounds instead of overflowing, for amounts that come
// from pods and nodes: batch-cpu "1E" is 10^18 milli-cores, and a wrapped sum or product turns a
// huge limit into a negative one (to a cgroup, unlimited).
#pragma once

#include <cstdint>
#include <limits>

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

}  // namespace koord
