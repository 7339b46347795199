#include "metriccache/metric_cache_options.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace koord::roles::koordlet::metriccache {
namespace {

constexpr std::chrono::seconds kMaxRetention = std::chrono::hours(24 * 7);
constexpr std::int64_t kMaxCapacity = std::int64_t{1} << 24;

void checkRetention(std::chrono::seconds retention, std::string_view what) {
  if (retention <= std::chrono::seconds::zero() || retention > kMaxRetention) {
    throw std::invalid_argument("metric cache: " + std::string(what) +
                                " must be in (0s, 168h], got " + std::to_string(retention.count()) +
                                "s");
  }
}

}  // namespace

void MetricCacheOptions::validate() const {
  checkRetention(retention, "retention");
  for (const auto& [kind, kind_retention] : retention_by_kind) {
    checkRetention(kind_retention, "retention of " + std::string(toString(kind)));
  }
  if (collect_interval <= std::chrono::milliseconds::zero()) {
    throw std::invalid_argument("metric cache: collect interval must be positive");
  }
  if (series_expire <= std::chrono::seconds::zero()) {
    throw std::invalid_argument("metric cache: series expiry must be positive");
  }
  if (max_series == 0) {
    throw std::invalid_argument("metric cache: the series cap must be positive");
  }
  if (clock_step_reset < std::chrono::seconds::zero()) {
    throw std::invalid_argument("metric cache: clock step reset must not be negative");
  }
  for (MetricKind kind : allMetricKinds()) {
    const std::chrono::milliseconds kept = retentionFor(kind);
    const std::int64_t points =
        (kept.count() + collect_interval.count() - 1) / collect_interval.count();
    if (points > kMaxCapacity) {
      throw std::invalid_argument("metric cache: retention / collect interval exceeds " +
                                  std::to_string(kMaxCapacity) + " points per series");
    }
  }
}

std::chrono::seconds MetricCacheOptions::retentionFor(MetricKind kind) const {
  for (const auto& [listed, kind_retention] : retention_by_kind) {
    if (listed == kind) {
      return kind_retention;
    }
  }
  return retention;
}

std::uint32_t MetricCacheOptions::capacityFor(MetricKind kind) const {
  const std::chrono::milliseconds kept = retentionFor(kind);
  const std::int64_t interval = std::max<std::int64_t>(collect_interval.count(), 1);
  const std::int64_t points = (kept.count() + interval - 1) / interval;
  return static_cast<std::uint32_t>(std::clamp<std::int64_t>(points, 1, kMaxCapacity));
}

}  // namespace koord::roles::koordlet::metriccache
