#include "koord/core/clock.h"

#include <catch2/catch.hpp>

using namespace std::chrono_literals;

TEST_CASE("FakeClock moves only when told", "[core][clock]") {
  koord::FakeClock clock;
  auto wall = clock.now();
  auto mono = clock.monotonicNow();
  CHECK(clock.now() == wall);
  clock.advance(1500ms);
  CHECK(clock.now() - wall == 1500ms);
  CHECK(clock.monotonicNow() - mono == 1500ms);
  CHECK_THROWS(clock.advance(-1s));
  clock.setWall(wall - 1h);  // NTP step back: wall moves, monotonic does not
  CHECK(clock.now() == wall - 1h);
  CHECK(clock.monotonicNow() - mono == 1500ms);
}

TEST_CASE("the real clock moves forward", "[core][clock]") {
  auto& c = koord::Clock::real();
  auto a = c.monotonicNow();
  auto b = c.monotonicNow();
  CHECK(b >= a);
  CHECK(c.now().time_since_epoch() > 0s);
}
