// Time as koord code asks for it: wall time for API timestamps, monotonic time for intervals.
// Code takes a Clock& so tests can drive time with FakeClock instead of sleeping.
#pragma once

#include <chrono>
#include <mutex>

namespace koord {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual std::chrono::system_clock::time_point now() const = 0;
  virtual std::chrono::steady_clock::time_point monotonicNow() const = 0;

  /// The process's real clock.
  static Clock& real();
};

/// A clock that moves only when told to. Thread-safe.
class FakeClock : public Clock {
 public:
  explicit FakeClock(std::chrono::system_clock::time_point start =
                         std::chrono::system_clock::time_point(std::chrono::seconds(1700000000)));
  std::chrono::system_clock::time_point now() const override;
  std::chrono::steady_clock::time_point monotonicNow() const override;
  /// Moves both wall and monotonic time forward; a negative step is refused.
  void advance(std::chrono::nanoseconds step);
  /// Sets wall time only (as NTP would); monotonic time is unaffected.
  void setWall(std::chrono::system_clock::time_point t);

 private:
  mutable std::mutex mu_;
  std::chrono::system_clock::time_point wall_;
  std::chrono::steady_clock::time_point mono_;
};

}  // namespace koord
