// The decaying histogram: Koordinator's bucket layouts, percentiles read from tables of samples,
// the half-life decay and its renormalisation, and the checkpoint form with its refusals.
#include "prediction/histogram.h"

#include <catch2/catch.hpp>

#include "catch_expected.h"

#include <chrono>
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

using namespace koord::roles::koordlet::prediction;
using namespace std::chrono_literals;

namespace {

const TimePoint kT0 = TimePoint(std::chrono::seconds(1'700'000'000));

// The value a percentile lands on for samples of `v`: the end of v's bucket.
double bucketEnd(const ExponentialBuckets& b, double v) {
  return b.bucketStart(b.findBucket(v) + 1);
}

}  // namespace

TEST_CASE("prediction histogram: Koordinator's bucket layouts", "[prediction][histogram]") {
  // ceil(log_1.05(max * 0.05 / first + 1)) + 1 buckets.
  CHECK(cpuBuckets().numBuckets() == 158);
  CHECK(memoryBuckets().numBuckets() == 205);
  struct Row {
    double value;
    int bucket;
  };
  const std::vector<Row> cpu = {{0, 0},      {0.0249, 0}, {0.025, 1}, {0.0512, 1},
                                {0.0513, 2}, {-3, 0},     {1e9, 157}, {std::nan(""), 0}};
  for (const auto& r : cpu) {
    INFO("value " << r.value);
    CHECK(cpuBuckets().findBucket(r.value) == r.bucket);
  }
  CHECK(cpuBuckets().bucketStart(0) == 0);
  CHECK(cpuBuckets().bucketStart(1) == Approx(0.025));
  CHECK(cpuBuckets().bucketStart(2) == Approx(0.05125));
  // The last memory bucket starts at or past 2 TiB, the first at 5 MiB.
  CHECK(memoryBuckets().bucketStart(1) == Approx(5.0 * 1024 * 1024));
  CHECK(memoryBuckets().bucketStart(204) >= std::ldexp(1.0, 41));
  CHECK(memoryBuckets().bucketStart(203) < std::ldexp(1.0, 41));
  CHECK(memoryBuckets().findBucket(std::ldexp(1.0, 42)) == 204);
  CHECK_THROWS_AS(ExponentialBuckets(0, 1, 1.05, 1), std::invalid_argument);
  CHECK_THROWS_AS(ExponentialBuckets(10, 1, 1.0, 1), std::invalid_argument);
}

TEST_CASE("prediction histogram: percentiles from tables of samples", "[prediction][histogram]") {
  const auto& b = cpuBuckets();
  struct Row {
    std::vector<std::pair<double, int>> samples;  // value, count (all at one time)
    double percentile;
    double expected;
  };
  const std::vector<Row> rows = {
      {{}, 0.95, 0.0},
      {{{1.0, 90}, {4.0, 10}}, 0.5, bucketEnd(b, 1.0)},
      {{{1.0, 90}, {4.0, 10}}, 0.9, bucketEnd(b, 1.0)},
      {{{1.0, 90}, {4.0, 10}}, 0.95, bucketEnd(b, 4.0)},
      {{{1.0, 90}, {4.0, 10}}, 1.0, bucketEnd(b, 4.0)},
      {{{0.01, 1}}, 0.95, b.bucketStart(1)},
      {{{2.0, 50}, {3.0, 49}, {8.0, 1}}, 0.98, bucketEnd(b, 3.0)},
      {{{2.0, 50}, {3.0, 49}, {8.0, 1}}, 1.0, bucketEnd(b, 8.0)},
      // Beyond the layout: the start of the last bucket, which has no end.
      {{{5000.0, 3}}, 0.95, b.bucketStart(b.numBuckets() - 1)},
  };
  for (std::size_t i = 0; i < rows.size(); ++i) {
    INFO("row " << i);
    DecayingHistogram h(b, 12h);
    for (auto [value, count] : rows[i].samples)
      for (int n = 0; n < count; ++n)
        h.addSample(value, 1, kT0);
    CHECK(h.empty() == rows[i].samples.empty());
    CHECK(h.percentile(rows[i].percentile) == Approx(rows[i].expected));
  }
}

TEST_CASE("prediction histogram: a sample one half-life newer weighs twice as much",
          "[prediction][histogram]") {
  const auto& b = cpuBuckets();
  const double old_end = bucketEnd(b, 1.0);
  const double new_end = bucketEnd(b, 4.0);
  for (int halvings : {0, 1, 2, 5}) {
    INFO("half-lives between the samples: " << halvings);
    DecayingHistogram h(b, 1h);
    h.addSample(1.0, 1, kT0);
    h.addSample(4.0, 1, kT0 + std::chrono::hours(halvings));
    // The old sample holds 1 / (1 + 2^h) of the weight.
    const double old_share = 1.0 / (1.0 + std::exp2(halvings));
    CHECK(h.percentile(old_share - 0.01) == Approx(old_end));
    CHECK(h.percentile(old_share + 0.01) == Approx(new_end));
  }
  // Samples out of order decay the same way: the older one is lighter whenever it comes.
  DecayingHistogram late(b, 1h);
  late.addSample(4.0, 1, kT0 + 2h);
  late.addSample(1.0, 1, kT0);
  CHECK(late.percentile(0.19) == Approx(old_end));
  CHECK(late.percentile(0.21) == Approx(new_end));
}

TEST_CASE("prediction histogram: weights renormalise past 2^100 and old samples fade out",
          "[prediction][histogram]") {
  const auto& b = cpuBuckets();
  DecayingHistogram h(b, 1min);
  for (int minute = 0; minute < 1000; ++minute)
    h.addSample(1.0, 1, kT0 + std::chrono::minutes(minute));
  CHECK(std::isfinite(h.totalWeight()));
  CHECK(h.totalWeight() < std::ldexp(1.0, 102));
  CHECK(h.percentile(0.5) == Approx(bucketEnd(b, 1.0)));
  REQUIRE(h.referenceTime().has_value());
  CHECK(*h.referenceTime() > kT0 + 800min);

  // 150 half-lives later the old samples weigh below epsilon: only the new one counts.
  h.addSample(4.0, 1, kT0 + 999min + 150min);
  CHECK(h.percentile(0.01) == Approx(bucketEnd(b, 4.0)));
}

TEST_CASE("prediction histogram: checkpoint round trip keeps the percentiles",
          "[prediction][histogram]") {
  const auto& b = memoryBuckets();
  DecayingHistogram h(b, 24h);
  const std::vector<double> values = {64e6, 128e6, 512e6, 3e9, 3e9, 7e9, 100e9};
  for (std::size_t i = 0; i < values.size(); ++i)
    h.addSample(values[i], 1, kT0 + std::chrono::hours(i));
  HistogramCheckpoint saved = h.save();
  CHECK(saved.total_weight == h.totalWeight());
  CHECK(saved.reference_time == h.referenceTime());
  REQUIRE(!saved.buckets.empty());
  std::uint32_t heaviest = 0;
  for (auto [bucket, weight] : saved.buckets)
    heaviest = std::max(heaviest, weight);
  CHECK(heaviest == kMaxCheckpointWeight);

  DecayingHistogram restored(b, 24h);
  REQUIRE(restored.load(saved));
  for (double p : {0.1, 0.5, 0.9, 0.95, 0.98, 1.0}) {
    INFO("percentile " << p);
    CHECK(restored.percentile(p) == Approx(h.percentile(p)));
  }
  CHECK(restored.save() == saved);
  // New samples keep decaying against the restored reference.
  restored.addSample(1e6, 1, kT0 + 48h);
  CHECK(restored.percentile(0.01) == Approx(bucketEnd(b, 1e6)));

  // An empty histogram saves without buckets and restores empty.
  DecayingHistogram empty(b, 24h);
  HistogramCheckpoint none = empty.save();
  CHECK(none.buckets.empty());
  CHECK_FALSE(none.reference_time.has_value());
  DecayingHistogram from_none(b, 24h);
  REQUIRE(from_none.load(none));
  CHECK(from_none.empty());
}

TEST_CASE("prediction histogram: a bad checkpoint is refused and changes nothing",
          "[prediction][histogram]") {
  const auto& b = cpuBuckets();
  auto good = [&] {
    HistogramCheckpoint c;
    c.reference_time = kT0;
    c.total_weight = 10;
    c.buckets = {{3, 5000}, {10, 10000}};
    return c;
  };
  struct Row {
    std::string what;
    HistogramCheckpoint checkpoint;
    std::string error;
  };
  std::vector<Row> rows;
  {
    auto c = good();
    c.buckets.back().first = 158;
    rows.push_back({"bucket past the layout", c, "beyond the layout"});
  }
  {
    auto c = good();
    c.buckets = {{10, 1}, {10, 2}};
    rows.push_back({"repeated bucket", c, "repeated or out of order"});
  }
  {
    auto c = good();
    c.buckets = {{10, 1}, {3, 2}};
    rows.push_back({"buckets out of order", c, "repeated or out of order"});
  }
  {
    auto c = good();
    c.buckets.front().second = 0;
    rows.push_back({"zero weight", c, "is not in [1, 10000]"});
  }
  {
    auto c = good();
    c.buckets.front().second = kMaxCheckpointWeight + 1;
    rows.push_back({"weight above the maximum", c, "is not in [1, 10000]"});
  }
  {
    auto c = good();
    c.total_weight = -1;
    rows.push_back({"negative total", c, "total weight"});
  }
  {
    auto c = good();
    c.total_weight = std::numeric_limits<double>::infinity();
    rows.push_back({"infinite total", c, "total weight"});
  }
  {
    auto c = good();
    c.reference_time.reset();
    rows.push_back({"no reference time", c, "without a reference time"});
  }
  {
    auto c = good();
    c.buckets.clear();
    for (std::uint32_t i = 0; i < 159; ++i)
      c.buckets.emplace_back(i, 1);
    rows.push_back({"more buckets than the layout", c, "more than the layout"});
  }
  for (const auto& row : rows) {
    INFO(row.what);
    DecayingHistogram h(b, 1h);
    h.addSample(2.0, 1, kT0);
    const double before = h.percentile(0.95);
    const double total = h.totalWeight();
    auto loaded = h.load(row.checkpoint);
    REQUIRE_FALSE(loaded);
    CHECK_THAT(loaded.error().message, Catch::Contains(row.error));
    CHECK(h.percentile(0.95) == before);
    CHECK(h.totalWeight() == total);
  }
  DecayingHistogram h(b, 1h);
  REQUIRE(h.load(good()));
  CHECK(h.percentile(1.0) == Approx(b.bucketStart(11)));
}
