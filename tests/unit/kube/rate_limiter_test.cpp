// The client-side token bucket, driven by FakeClock: no test sleeps.
#include <boost/asio/io_context.hpp>
#include <catch2/catch.hpp>

#include <chrono>

#include "koord/core/clock.h"
#include "koord/kube/rate_limiter.h"

using namespace std::chrono_literals;
using koord::kube::RateLimiter;

TEST_CASE("the bucket starts full: burst requests pass at once", "[rate_limiter]") {
  koord::FakeClock clock;
  RateLimiter limiter(5, 10, clock);
  for (int i = 0; i < 10; ++i)
    CHECK(limiter.acquire() == 0ns);
  // The 11th owes one token at 5 qps: 200ms; the 12th queues behind it.
  CHECK(limiter.acquire() == 200ms);
  CHECK(limiter.acquire() == 400ms);
  CHECK(limiter.tokens() == Approx(-2));
}

TEST_CASE("tokens refill at qps and never beyond burst", "[rate_limiter]") {
  koord::FakeClock clock;
  RateLimiter limiter(10, 2, clock);
  CHECK(limiter.acquire() == 0ns);
  CHECK(limiter.acquire() == 0ns);
  CHECK(limiter.acquire() == 100ms);
  clock.advance(100ms);  // the reserved token is now paid for
  CHECK(limiter.tokens() == Approx(0).margin(1e-9));
  clock.advance(50ms);
  CHECK(limiter.acquire() == 50ms);
  clock.advance(1h);
  CHECK(limiter.tokens() == Approx(2));
  CHECK(limiter.acquire() == 0ns);
  CHECK(limiter.acquire() == 0ns);
  CHECK(limiter.acquire() == 100ms);
}

TEST_CASE("fractional qps and a burst below one", "[rate_limiter]") {
  koord::FakeClock clock;
  RateLimiter limiter(0.5, 0, clock);
  CHECK(limiter.burst() == 1);
  CHECK(limiter.acquire() == 0ns);
  CHECK(limiter.acquire() == 2s);
  clock.advance(3s);
  CHECK(limiter.acquire() == 1s);
}

TEST_CASE("qps <= 0 disables the limiter", "[rate_limiter]") {
  koord::FakeClock clock;
  RateLimiter limiter(0, 1, clock);
  for (int i = 0; i < 1000; ++i)
    REQUIRE(limiter.acquire() == 0ns);
}

TEST_CASE("asyncAcquire with a token at hand completes on the next poll", "[rate_limiter]") {
  koord::FakeClock clock;
  RateLimiter limiter(1, 2, clock);
  boost::asio::io_context io;
  int done = 0;
  limiter.asyncAcquire(io, [&](boost::system::error_code ec) {
    CHECK_FALSE(ec);
    ++done;
  });
  limiter.asyncAcquire(io, [&](boost::system::error_code ec) { ++done; });
  CHECK(done == 0);  // never inline
  io.poll();
  CHECK(done == 2);
  // The third would wait a second: it is on a timer, not run by poll().
  limiter.asyncAcquire(io, [&](boost::system::error_code ec) { ++done; });
  io.poll();
  CHECK(done == 2);
}
