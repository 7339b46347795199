// The token bucket that bounds how long a container may run above its CPU limit under the cfs
// quota burst (Koordinator's burstLimiter): running above the limit spends tokens, running well
// below it saves them, and an empty bucket takes the raised quota back down.
#pragma once

#include <chrono>
#include <cstdint>

namespace koord::roles::koordlet::qosmanager {

/// Usage (percent of the limit) at or above which tokens are spent, and below which they are
/// saved; in between the bucket holds.
inline constexpr std::int64_t kLimiterSpendAtPercent = 100;
inline constexpr std::int64_t kLimiterSaveBelowPercent = 60;

class BurstLimiter {
 public:
  using TimePoint = std::chrono::system_clock::time_point;

  /// A bucket of period x (max_scale_percent - 100) percent-seconds, starting `init_ratio`
  /// full: Koordinator starts each container at a random fill below half, so that containers
  /// started together do not all run dry in the same round.
  BurstLimiter(std::int64_t period_seconds, std::int64_t max_scale_percent, double init_ratio,
               TimePoint now);

  /// Accounts the time since the last call at `usage_percent` of the limit and says whether
  /// tokens are left (more than none).
  bool allow(TimePoint now, std::int64_t usage_percent);

  /// Starts over (as the constructor) when the configuration's capacity changed.
  void reconfigure(std::int64_t period_seconds, std::int64_t max_scale_percent, double init_ratio,
                   TimePoint now);

  /// Not asked for twice its period: the container is gone.
  bool expired(TimePoint now) const;

  double tokens() const { return tokens_; }
  double capacity() const { return capacity_; }

 private:
  void reset(std::int64_t period_seconds, std::int64_t max_scale_percent, double init_ratio,
             TimePoint now);

  double capacity_ = 0;
  double tokens_ = 0;
  TimePoint last_{};
  std::chrono::seconds expire_after_{0};
};

}  // namespace koord::roles::koordlet::qosmanager
