#include "koord/core/clock.h"

#include <stdexcept>

namespace koord {
namespace {

class RealClock : public Clock {
 public:
  std::chrono::system_clock::time_point now() const override {
    return std::chrono::system_clock::now();
  }
  std::chrono::steady_clock::time_point monotonicNow() const override {
    return std::chrono::steady_clock::now();
  }
};

}  // namespace

Clock& Clock::real() {
  static RealClock clock;
  return clock;
}

FakeClock::FakeClock(std::chrono::system_clock::time_point start)
    : wall_(start), mono_(std::chrono::steady_clock::time_point(std::chrono::hours(1))) {}

std::chrono::system_clock::time_point FakeClock::now() const {
  std::lock_guard lock(mu_);
  return wall_;
}

std::chrono::steady_clock::time_point FakeClock::monotonicNow() const {
  std::lock_guard lock(mu_);
  return mono_;
}

void FakeClock::advance(std::chrono::nanoseconds step) {
  if (step.count() < 0)
    throw std::invalid_argument("FakeClock cannot go backwards");
  std::lock_guard lock(mu_);
  wall_ += std::chrono::duration_cast<std::chrono::system_clock::duration>(step);
  mono_ += std::chrono::duration_cast<std::chrono::steady_clock::duration>(step);
}

void FakeClock::setWall(std::chrono::system_clock::time_point t) {
  std::lock_guard lock(mu_);
  wall_ = t;
}

}  // namespace koord
