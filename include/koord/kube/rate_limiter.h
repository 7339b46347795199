// client-go's client-side rate limiter (flowcontrol.NewTokenBucketRateLimiter): a token bucket
// of `burst` tokens refilled at `qps` per second, so a controller cannot flood the API server.
#pragma once

#include <chrono>
#include <functional>
#include <mutex>

#include <boost/system/error_code.hpp>

#include "koord/core/clock.h"

namespace boost::asio {
class io_context;
}

namespace koord::kube {

/// Thread-safe. Like golang.org/x/time/rate's Reserve: every acquire takes a token now, going
/// into debt when the bucket is empty, and says how long the caller must wait before it may use
/// that token. Reservations are never cancelled, so waiters are served in order.
class RateLimiter {
 public:
  /// qps <= 0 means no limit; burst < 1 counts as 1. The bucket starts full.
  RateLimiter(double qps, int burst, Clock& clock = Clock::real());

  /// Reserves one token; the wait before it may be used (zero when a token was available).
  std::chrono::nanoseconds acquire();
  /// Reserves one token and calls `done` on `io` once the wait is over. `done` gets the timer's
  /// error (operation_aborted if the io_context shuts down its timers first).
  void asyncAcquire(boost::asio::io_context& io,
                    std::function<void(boost::system::error_code)> done);

  /// Tokens in the bucket now (negative while reservations are outstanding). For tests.
  double tokens() const;
  double qps() const { return qps_; }
  int burst() const { return burst_; }

 private:
  void refillLocked(std::chrono::steady_clock::time_point now) const;

  const double qps_;
  const int burst_;
  Clock& clock_;
  mutable std::mutex mu_;
  mutable double tokens_;
  mutable std::chrono::steady_clock::time_point last_;
};

}  // namespace koord::kube
