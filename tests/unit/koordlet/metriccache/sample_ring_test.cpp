#include "metriccache/sample_ring.h"

#include <catch2/catch.hpp>

#include <cstdint>

using namespace koord::roles::koordlet::metriccache;
using Push = SampleRing::Push;

namespace {

constexpr std::int64_t kT0 = 1'700'000'000'000;  // ms since the epoch
constexpr std::int64_t kDayMs = 24LL * 3600 * 1000;

}  // namespace

TEST_CASE("a ring keeps points in time order") {
  SampleRing ring(10);
  REQUIRE(ring.push(kT0, 1.5F) == Push::kAppended);
  REQUIRE(ring.push(kT0 + 1000, 2.5F) == Push::kAppended);
  REQUIRE(ring.size() == 2);
  CHECK(ring.timeAt(0) == kT0);
  CHECK(ring.valueAt(0) == 1.5F);
  CHECK(ring.newestTimeMs() == kT0 + 1000);
  CHECK(ring.valueAt(1) == 2.5F);
}

TEST_CASE("a ring refuses duplicate and older times and stays unchanged") {
  SampleRing ring(10);
  REQUIRE(ring.push(kT0 + 2000, 1.0F) == Push::kAppended);
  CHECK(ring.push(kT0 + 2000, 9.0F) == Push::kDuplicate);
  CHECK(ring.push(kT0 + 1000, 9.0F) == Push::kOutOfOrder);
  REQUIRE(ring.size() == 1);
  CHECK(ring.valueAt(0) == 1.0F);
}

TEST_CASE("a full ring overwrites its oldest points and keeps order across the wrap") {
  SampleRing ring(5);
  for (int i = 0; i < 12; ++i) {
    REQUIRE(ring.push(kT0 + i * 1000, static_cast<float>(i)) == Push::kAppended);
  }
  REQUIRE(ring.size() == 5);
  for (std::size_t i = 0; i < 5; ++i) {
    CHECK(ring.timeAt(i) == kT0 + static_cast<std::int64_t>(7 + i) * 1000);
    CHECK(ring.valueAt(i) == static_cast<float>(7 + i));
  }
  CHECK(ring.lowerBound(kT0) == 0);
  CHECK(ring.lowerBound(kT0 + 9000) == 2);
  CHECK(ring.lowerBound(kT0 + 9500) == 3);
  CHECK(ring.lowerBound(kT0 + 12000) == 5);
  CHECK(ring.allocatedBytes() == 5 * 8);
}

TEST_CASE("a ring allocates lazily up to its capacity") {
  SampleRing ring(1800);
  CHECK(ring.allocatedBytes() == 0);
  for (int i = 0; i < 3; ++i) {
    ring.push(kT0 + i, 1.0F);
  }
  CHECK(ring.allocatedBytes() == 16 * 8);
  for (int i = 3; i < 5000; ++i) {
    ring.push(kT0 + i, 1.0F);
  }
  CHECK(ring.size() == 1800);
  CHECK(ring.allocatedBytes() == 1800 * 8);
  CHECK(ring.timeAt(0) == kT0 + 5000 - 1800);
}

TEST_CASE("dropBefore removes only older points") {
  SampleRing ring(100);
  for (int i = 0; i < 10; ++i) {
    ring.push(kT0 + i * 1000, static_cast<float>(i));
  }
  CHECK(ring.dropBefore(kT0 + 4000) == 4);
  REQUIRE(ring.size() == 6);
  CHECK(ring.timeAt(0) == kT0 + 4000);
  CHECK(ring.dropBefore(kT0 + 4000) == 0);
  CHECK(ring.dropBefore(kT0 + 100000) == 6);
  CHECK(ring.empty());
  CHECK(ring.push(kT0, 3.0F) == Push::kAppended);  // an emptied ring takes any time again
}

TEST_CASE("a ring whose points span more than 32-bit milliseconds rebases") {
  SampleRing ring(10);
  ring.push(kT0, 1.0F);
  ring.push(kT0 + 30 * kDayMs, 2.0F);
  ring.push(kT0 + 60 * kDayMs, 3.0F);  // 60 days after the base: offsets must move
  REQUIRE(ring.size() == 2);
  CHECK(ring.timeAt(0) == kT0 + 30 * kDayMs);
  CHECK(ring.valueAt(0) == 2.0F);
  CHECK(ring.timeAt(1) == kT0 + 60 * kDayMs);

  ring.push(kT0 + 200 * kDayMs, 4.0F);  // everything older is beyond reach
  REQUIRE(ring.size() == 1);
  CHECK(ring.timeAt(0) == kT0 + 200 * kDayMs);
  CHECK(ring.valueAt(0) == 4.0F);
}

TEST_CASE("a sparse ring gives memory back and keeps its points") {
  SampleRing ring(1000);
  for (int i = 0; i < 1000; ++i) {
    ring.push(kT0 + i, static_cast<float>(i));
  }
  REQUIRE(ring.allocatedBytes() == 1000 * 8);
  ring.dropBefore(kT0 + 990);
  ring.shrinkIfSparse();
  CHECK(ring.allocatedBytes() == 20 * 8);
  REQUIRE(ring.size() == 10);
  CHECK(ring.timeAt(0) == kT0 + 990);
  CHECK(ring.valueAt(9) == 999.0F);
  CHECK(ring.push(kT0 + 1000, 1.0F) == Push::kAppended);
}
