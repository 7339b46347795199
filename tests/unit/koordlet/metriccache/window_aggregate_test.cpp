#include "metriccache/window_aggregate.h"

#include <catch2/catch.hpp>

#include <vector>

using namespace koord::roles::koordlet::metriccache;
using std::chrono::milliseconds;
using std::chrono::seconds;

namespace {

const TimePoint kStart = fromMs(1'700'000'000'000);

std::vector<float> range(int from, int to) {
  std::vector<float> out;
  for (int v = from; v <= to; ++v) {
    out.push_back(static_cast<float>(v));
  }
  return out;
}

}  // namespace

TEST_CASE("percentiles take the lower nearest rank, as Koordinator does") {
  const auto ten = range(1, 10);
  CHECK(percentileOfSorted(ten, 500) == 5);  // rank floor(5.0)
  CHECK(percentileOfSorted(ten, 900) == 9);  // rank floor(9.0)
  CHECK(percentileOfSorted(ten, 950) == 9);  // rank floor(9.5)
  CHECK(percentileOfSorted(ten, 990) == 9);  // rank floor(9.9)
  CHECK(percentileOfSorted(ten, 1000) == 10);

  const auto hundred = range(1, 100);
  CHECK(percentileOfSorted(hundred, 950) == 95);
  CHECK(percentileOfSorted(hundred, 990) == 99);

  const auto three = range(1, 3);
  CHECK(percentileOfSorted(three, 500) == 1);  // rank floor(1.5) = 1
  CHECK(percentileOfSorted(three, 100) == 1);  // rank 0 clamps to the smallest
}

TEST_CASE("withPercentiles sorts the window's values") {
  std::vector<float> values{7, 1, 9, 3, 5, 2, 10, 4, 8, 6};
  WindowSummary summary;
  summary.count = values.size();
  summary.avg = 5.5;
  const WindowAggregate out = withPercentiles(summary, values);
  CHECK(out.avg == 5.5);
  CHECK(out.count == 10);
  CHECK(out.p50 == 5);
  CHECK(out.p90 == 9);
  CHECK(out.p95 == 9);
  CHECK(out.p99 == 9);
}

TEST_CASE("coverage follows Koordinator's half-window rule") {
  WindowSummary summary;
  summary.count = 2;
  summary.first_time = kStart + seconds(100);
  summary.last_time = kStart + seconds(250);  // spans 150 s
  const TimePoint end = kStart + seconds(300);
  CHECK(coverageRatio(summary, kStart, end) == Approx(0.5));
  CHECK(coversWindow(summary, kStart, end));

  summary.last_time -= milliseconds(1);
  CHECK_FALSE(coversWindow(summary, kStart, end));
  CHECK(coversWindow(summary, kStart, end, 0.25));

  CHECK_FALSE(coversWindow(summary, end, kStart));  // inverted window
  summary.count = 0;
  CHECK_FALSE(coversWindow(summary, kStart, end));
  CHECK(coverageRatio(summary, kStart, end) == 0);
}
