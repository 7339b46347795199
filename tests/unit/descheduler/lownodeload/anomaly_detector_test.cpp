// The anomaly detector: a count must pass the condition, the anomalous state holds until the
// timeout or enough normal passes, a reset starts the counts over, idle detectors are forgotten.
#include "plugins/lownodeload/anomaly_detector.h"

#include <catch2/catch.hpp>

namespace koord::roles::descheduler::lownodeload {
namespace {

using namespace std::chrono_literals;
using State = AnomalyDetector::State;

const TimePoint kStart = TimePoint{} + 1000h;

TEST_CASE("AnomalyDetector: anomalous once the count passes consecutiveAbnormalities",
          "[descheduler]") {
  LoadAnomalyCondition c;
  c.consecutive_abnormalities = 3;
  AnomalyDetector d(c, kStart);
  for (int i = 1; i <= 3; ++i)
    CHECK(d.mark(false, kStart + i * 1s) == State::kOk);
  CHECK(d.mark(false, kStart + 4s) == State::kAnomaly);
  // It stays anomalous while abnormal, until the timeout runs out.
  CHECK(d.mark(false, kStart + 30s) == State::kAnomaly);
  CHECK(d.mark(false, kStart + 4s + 61s) == State::kOk);
}

TEST_CASE("AnomalyDetector: a normal pass breaks the run; enough of them end an anomaly",
          "[descheduler]") {
  LoadAnomalyCondition c;
  c.consecutive_abnormalities = 2;
  c.consecutive_normalities = 1;
  AnomalyDetector d(c, kStart);
  d.mark(false, kStart);
  d.mark(false, kStart);
  CHECK(d.mark(true, kStart) == State::kOk);
  CHECK(d.consecutiveAbnormalities() == 0);
  d.mark(false, kStart);
  d.mark(false, kStart);
  REQUIRE(d.mark(false, kStart) == State::kAnomaly);
  CHECK(d.mark(true, kStart) == State::kAnomaly);
  CHECK(d.mark(true, kStart) == State::kOk);
}

TEST_CASE("AnomalyDetectors: reset, condition of one, and cache expiry", "[descheduler]") {
  LoadAnomalyCondition c;
  c.consecutive_abnormalities = 1;
  AnomalyDetectors ds(5min);
  CHECK(ds.markAbnormal("n", c, kStart));
  CHECK(ds.find("n", kStart) == nullptr);

  c.consecutive_abnormalities = 2;
  CHECK_FALSE(ds.markAbnormal("n", c, kStart));
  CHECK_FALSE(ds.markAbnormal("n", c, kStart));
  REQUIRE(ds.markAbnormal("n", c, kStart));
  // A reset ends the anomaly and starts the counts over.
  ds.reset("n", kStart);
  CHECK_FALSE(ds.markAbnormal("n", c, kStart));
  CHECK_FALSE(ds.markAbnormal("n", c, kStart));
  CHECK(ds.markAbnormal("n", c, kStart));
  REQUIRE(ds.find("n", kStart + 5min) != nullptr);
  CHECK(ds.find("n", kStart + 5min + 1s) == nullptr);
}

}  // namespace
}  // namespace koord::roles::descheduler::lownodeload
