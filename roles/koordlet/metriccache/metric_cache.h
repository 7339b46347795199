// The koordlet's in-process metric cache: per-(kind, object key) time series of CPU and memory
// usage with bounded memory, windowed aggregates for the NodeMetric reporter and the QoS manager.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <shared_mutex>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "koord/core/result.h"
#include "metriccache/metric_cache_errors.h"
#include "metriccache/metric_cache_options.h"
#include "metriccache/metric_kind.h"
#include "metriccache/metric_time.h"
#include "metriccache/sample_ring.h"
#include "metriccache/window_aggregate.h"

namespace koord::roles::koordlet::metriccache {

/// One sample for appendAll(); key is borrowed for the call.
struct Sample {
  MetricKind kind;
  std::string_view key;
  TimePoint time;
  double value;
};

struct TimedValue {
  TimePoint time;
  double value = 0;
};

struct AppendSummary {
  std::size_t appended = 0;
  std::size_t rejected = 0;
};

struct GarbageReport {
  std::size_t series_removed = 0;
  std::size_t points_removed = 0;
};

/// Totals for the koordlet's own metrics; the counters only grow.
struct MetricCacheStats {
  std::size_t series = 0;
  std::size_t points = 0;
  std::uint64_t appended = 0;
  std::uint64_t rejected_out_of_order = 0;
  std::uint64_t rejected_duplicate = 0;
  std::uint64_t rejected_non_finite = 0;
  std::uint64_t rejected_series_limit = 0;
  std::uint64_t clock_step_resets = 0;
};

/// Thread-safe: appends take an exclusive lock, queries a shared one; only forEachSeries() runs a
/// callback under it.
/// Query windows [start, end] include both ends, at millisecond precision, like a Prometheus
/// querier's [mint, maxt].
///
/// Memory: a full series costs 8 bytes per point of capacity (14,400 bytes at the defaults) plus
/// a per-object overhead of the hash node, the key and a 40-byte entry per kind (~200 bytes for a
/// pod UID with two kinds). Rings grow lazily, so a series only pays for what it has held.
class MetricCache {
 public:
  /// Throws std::invalid_argument when options.validate() does.
  explicit MetricCache(MetricCacheOptions options = {});

  /// Appends one sample; values are CPU cores or memory bytes. Refuses (result, not exception)
  /// a sample not newer than the series' newest, a non-finite value and a new keyed series at
  /// the cap. A sample more than clock_step_reset older restarts the series instead.
  Result<void> append(MetricKind kind, std::string_view key, TimePoint time, double value);
  /// Appends under a single lock acquisition, as one collector round produces them.
  AppendSummary appendAll(std::span<const Sample> samples);

  /// Count, first/last time, avg, last and percentiles over [start, end]; nullopt when the series
  /// is unknown or has no point in the window. Sorting happens outside the lock.
  std::optional<WindowAggregate> aggregate(MetricKind kind, std::string_view key, TimePoint start,
                                           TimePoint end) const;
  /// The same without percentiles (no copy, no sort): "avg of the last N seconds".
  std::optional<WindowSummary> summarize(MetricKind kind, std::string_view key, TimePoint start,
                                         TimePoint end) const;
  /// The newest sample of a series.
  std::optional<TimedValue> last(MetricKind kind, std::string_view key) const;
  /// The newest sample if it is at most max_age older than now. A sample stamped after now (the
  /// wall clock stepped back) counts as fresh.
  std::optional<TimedValue> lastWithin(MetricKind kind, std::string_view key,
                                       std::chrono::nanoseconds max_age, TimePoint now) const;

  /// Drops series whose newest sample is older than now - series_expire and points older than
  /// now - retention; shrinks rings left mostly empty. O(series), meant for every 300 s.
  GarbageReport collectGarbage(TimePoint now);
  /// Returns whether the series existed.
  bool removeSeries(MetricKind kind, std::string_view key);
  /// Removes every series of an object key (a deleted pod); returns how many.
  std::size_t removeObject(std::string_view key);

  /// Calls visit(kind, key, ring) for every series, under the shared lock: appends wait until
  /// it returns, so it must be quick (the checkpoint encodes a series in microseconds) and must
  /// not call back into the cache.
  void forEachSeries(
      const std::function<void(MetricKind, std::string_view, const SampleRing&)>& visit) const;

  std::size_t seriesCount() const;
  /// Heap and bookkeeping bytes held by the series, for the koordlet's own metrics; see the class
  /// comment for the per-series cost.
  std::size_t approximateBytes() const;
  MetricCacheStats stats() const;
  const MetricCacheOptions& options() const { return options_; }

 private:
  struct KindSeries {
    MetricKind kind;
    SampleRing ring;
  };
  /// All series of one object key, so the key is stored once and a pod is removed in one step.
  struct ObjectSeries {
    std::vector<KindSeries> series;
  };
  struct KeyHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view key) const {
      return std::hash<std::string_view>{}(key);
    }
  };
  using ObjectMap = std::unordered_map<std::string, ObjectSeries, KeyHash, std::equal_to<>>;

  Result<void> appendLocked(MetricKind kind, std::string_view key, TimePoint time, double value);
  const SampleRing* findLocked(MetricKind kind, std::string_view key) const;
  std::optional<WindowSummary> summarizeLocked(const SampleRing& ring, TimePoint start,
                                               TimePoint end, std::vector<float>* values) const;
  void forgetSeries(std::string_view key, std::size_t count);

  const MetricCacheOptions options_;
  mutable std::shared_mutex mu_;
  ObjectMap objects_;
  std::size_t series_ = 0;
  std::size_t keyed_series_ = 0;
  MetricCacheStats counters_;
};

}  // namespace koord::roles::koordlet::metriccache
