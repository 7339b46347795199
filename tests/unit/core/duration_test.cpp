#include "koord/core/duration.h"

#include <catch2/catch.hpp>

using namespace std::chrono_literals;
using koord::formatGoDuration;
using koord::parseGoDuration;

TEST_CASE("Go durations parse like time.ParseDuration", "[core][duration]") {
  CHECK(parseGoDuration("1s") == 1s);
  CHECK(parseGoDuration("900s") == 900s);
  CHECK(parseGoDuration("1m30s") == 90s);
  CHECK(parseGoDuration("1.5h") == 90min);
  CHECK(parseGoDuration("500ms") == 500ms);
  CHECK(parseGoDuration("10us") == 10us);
  CHECK(parseGoDuration("3ns") == 3ns);
  CHECK(parseGoDuration("0") == 0ns);
  CHECK(parseGoDuration("-2s") == -2s);
  CHECK(parseGoDuration("+2s") == 2s);
  CHECK(parseGoDuration(".5s") == 500ms);
}

TEST_CASE("malformed Go durations are refused", "[core][duration]") {
  for (const char* bad :
       {"", "s", "1", "10", "1x", "1s2", "--1s", "1 s", ".s", "1e3s", "9999999999h"}) {
    INFO(bad);
    CHECK_FALSE(parseGoDuration(bad).has_value());
  }
}

TEST_CASE("Go durations print like Duration.String", "[core][duration]") {
  CHECK(formatGoDuration(0ns) == "0s");
  CHECK(formatGoDuration(1s) == "1s");
  CHECK(formatGoDuration(900s) == "15m0s");
  CHECK(formatGoDuration(1h) == "1h0m0s");
  CHECK(formatGoDuration(90s) == "1m30s");
  CHECK(formatGoDuration(1500ms) == "1.5s");
  CHECK(formatGoDuration(500ms) == "500ms");
  CHECK(formatGoDuration(-2s) == "-2s");
  CHECK(formatGoDuration(12ns) == "12ns");
}
