#include "qosmanager/cpuburst/burst_limiter.h"

#include <algorithm>

namespace koord::roles::koordlet::qosmanager {

namespace {

double capacityOf(std::int64_t period_seconds, std::int64_t max_scale_percent) {
  return static_cast<double>(period_seconds) * static_cast<double>(max_scale_percent - 100);
}

}  // namespace

BurstLimiter::BurstLimiter(std::int64_t period_seconds, std::int64_t max_scale_percent,
                           double init_ratio, TimePoint now) {
  reset(period_seconds, max_scale_percent, init_ratio, now);
}

void BurstLimiter::reset(std::int64_t period_seconds, std::int64_t max_scale_percent,
                         double init_ratio, TimePoint now) {
  capacity_ = capacityOf(period_seconds, max_scale_percent);
  tokens_ = capacity_ * std::clamp(init_ratio, 0.0, 1.0);
  last_ = now;
  expire_after_ = std::chrono::seconds(2 * std::max<std::int64_t>(period_seconds, 0));
}

bool BurstLimiter::allow(TimePoint now, std::int64_t usage_percent) {
  // A clock stepped back counts as no time passed.
  const double seconds = std::max(0.0, std::chrono::duration<double>(now - last_).count());
  if (usage_percent >= kLimiterSpendAtPercent)
    tokens_ -= static_cast<double>(usage_percent - 100) * seconds;
  else if (usage_percent < kLimiterSaveBelowPercent)
    tokens_ += static_cast<double>(100 - usage_percent) * seconds;
  tokens_ = std::clamp(tokens_, -capacity_, capacity_);
  last_ = now;
  return tokens_ > 0;
}

void BurstLimiter::reconfigure(std::int64_t period_seconds, std::int64_t max_scale_percent,
                               double init_ratio, TimePoint now) {
  if (capacityOf(period_seconds, max_scale_percent) != capacity_)
    reset(period_seconds, max_scale_percent, init_ratio, now);
}

bool BurstLimiter::expired(TimePoint now) const {
  return now - last_ > expire_after_;
}

}  // namespace koord::roles::koordlet::qosmanager
