#include <catch2/catch.hpp>

#include <cstdint>
#include <limits>

#include "koord/core/saturating.h"

namespace {
constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
}  // namespace

TEST_CASE("saturating int64 arithmetic sticks at the bounds", "[core]") {
  CHECK(koord::saturatingAdd(2, 3) == 5);
  CHECK(koord::saturatingAdd(kMax, 1) == kMax);
  CHECK(koord::saturatingAdd(kMin, -1) == kMin);
  CHECK(koord::saturatingAdd(kMax, kMin) == -1);
  CHECK(koord::saturatingSub(5, 7) == -2);
  CHECK(koord::saturatingSub(kMax, -1) == kMax);
  CHECK(koord::saturatingSub(kMin, 1) == kMin);
  CHECK(koord::saturatingSub(0, kMin) == kMax);
  CHECK(koord::saturatingMul(-4, 5) == -20);
  CHECK(koord::saturatingMul(std::int64_t{1'000'000'000'000'000'000}, 100) == kMax);
  CHECK(koord::saturatingMul(kMin, -1) == kMax);
  CHECK(koord::saturatingMul(kMax, -2) == kMin);
  CHECK(koord::saturatingMul(kMin, 2) == kMin);
}
