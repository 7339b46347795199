#include <catch2/catch.hpp>

#include <chrono>
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

TEST_CASE("saturating time arithmetic sticks at system_clock's bounds", "[core]") {
  using std::chrono::nanoseconds;
  using std::chrono::seconds;
  using TimePoint = std::chrono::system_clock::time_point;
  const TimePoint t{seconds(1'700'000'000)};
  CHECK(koord::saturatingSeconds(90) == seconds(90));
  CHECK(koord::saturatingSeconds(kMax) == nanoseconds::max());
  CHECK(koord::saturatingSeconds(kMin) == nanoseconds::min());
  CHECK(koord::saturatingAdd(t, seconds(5)) == t + seconds(5));
  CHECK(koord::saturatingAdd(t, nanoseconds::max()) == TimePoint::max());
  CHECK(koord::saturatingSub(t, seconds(5)) == t - seconds(5));
  CHECK(koord::saturatingSub(-t.time_since_epoch() + TimePoint{}, nanoseconds::max()) ==
        TimePoint::min());
  CHECK(koord::saturatingSub(t, nanoseconds::min()) == TimePoint::max());
  CHECK(koord::saturatingSub(t + seconds(7), t) == seconds(7));
  CHECK(koord::saturatingSub(t, TimePoint::min()) == nanoseconds::max());
  CHECK(koord::saturatingSub(TimePoint::min(), t) == nanoseconds::min());
}
