// Sizing of the koordlet's metric cache: retention, collect interval (which fix each series'
// ring capacity), series expiry for GC, the global series cap and the clock-step rule.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "metriccache/metric_kind.h"

namespace koord::roles::koordlet::metriccache {

struct MetricCacheOptions {
  /// How far back points are kept. The longest window the koordlet asks for is the 30-minute
  /// aggregated usage, so 30 minutes is enough; Koordinator's on-disk TSDB keeps 12h instead.
  std::chrono::seconds retention{1800};
  /// The collectors' interval (-collect-res-used-interval). With retention it fixes a ring's
  /// capacity: ceil(retention / collect_interval) points (1800 by default). Whichever of capacity
  /// and retention bites first drops the oldest points.
  std::chrono::milliseconds collect_interval{1000};
  /// Shorter retention (and so smaller rings) for some kinds, e.g. pods and containers when only
  /// the node series need the 30-minute window. Kinds not listed use retention.
  std::vector<std::pair<MetricKind, std::chrono::seconds>> retention_by_kind;
  /// GC drops a series whose newest sample is older than this (-metric-expire-seconds).
  std::chrono::seconds series_expire{1800};
  /// Most series with a non-empty object key (pods, containers, host applications). At the cap a
  /// new keyed series is refused (MetricCacheErrc::kSeriesLimit, counted in stats) while existing
  /// series keep working; slots come back through removeObject()/removeSeries() or GC. Node-level
  /// series (empty key, at most one per kind) never count, so a pod churn storm cannot starve them.
  std::size_t max_series = 4096;
  /// A sample older than a series' newest by more than this is taken for a wall-clock step back
  /// (NTP): the series restarts from it instead of refusing samples until time catches up. A
  /// smaller step is an out-of-order sample and is refused. Zero disables the reset.
  std::chrono::seconds clock_step_reset{60};

  /// Throws std::invalid_argument for values the cache cannot honour (a startup fault): a
  /// non-positive retention, interval or expiry, retention over 7 days, a zero series cap, a
  /// negative clock_step_reset, or a capacity over 2^24 points.
  void validate() const;
  std::chrono::seconds retentionFor(MetricKind kind) const;
  std::uint32_t capacityFor(MetricKind kind) const;
};

}  // namespace koord::roles::koordlet::metriccache
