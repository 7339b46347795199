#include "koord/kube/rate_limiter.h"

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

#include <algorithm>
#include <memory>

namespace koord::kube {

RateLimiter::RateLimiter(double qps, int burst, Clock& clock)
    : qps_(qps),
      burst_(std::max(burst, 1)),
      clock_(clock),
      tokens_(burst_),
      last_(clock.monotonicNow()) {}

void RateLimiter::refillLocked(std::chrono::steady_clock::time_point now) const {
  if (now <= last_)
    return;
  const double elapsed = std::chrono::duration<double>(now - last_).count();
  tokens_ = std::min<double>(burst_, tokens_ + elapsed * qps_);
  last_ = now;
}

std::chrono::nanoseconds RateLimiter::acquire() {
  if (qps_ <= 0)
    return std::chrono::nanoseconds(0);
  std::lock_guard lock(mu_);
  refillLocked(clock_.monotonicNow());
  tokens_ -= 1;
  if (tokens_ >= 0)
    return std::chrono::nanoseconds(0);
  // The debt is paid back at qps tokens per second; round up so the caller never wakes early.
  const double seconds = -tokens_ / qps_;
  return std::chrono::nanoseconds(static_cast<std::int64_t>(seconds * 1e9 + 0.999999));
}

void RateLimiter::asyncAcquire(boost::asio::io_context& io,
                               std::function<void(boost::system::error_code)> done) {
  const auto wait = acquire();
  if (wait.count() == 0) {
    // Posted, not called inline, so callers see the same re-entrancy either way.
    boost::asio::post(io, [done = std::move(done)] { done({}); });
    return;
  }
  auto timer = std::make_shared<boost::asio::steady_timer>(io, wait);
  timer->async_wait([timer, done = std::move(done)](boost::system::error_code ec) { done(ec); });
}

double RateLimiter::tokens() const {
  std::lock_guard lock(mu_);
  refillLocked(clock_.monotonicNow());
  return tokens_;
}

}  // namespace koord::kube
