#include "metriccache/metric_cache.h"

#include <cmath>
#include <limits>
#include <mutex>

namespace koord::roles::koordlet::metriccache {
namespace {

bool fitsFloat(double value) {
  return std::isfinite(value) && std::fabs(value) <= std::numeric_limits<float>::max();
}

std::int64_t toMs(std::chrono::nanoseconds d) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
}

}  // namespace

MetricCache::MetricCache(MetricCacheOptions options) : options_(std::move(options)) {
  options_.validate();
}

Result<void> MetricCache::append(MetricKind kind, std::string_view key, TimePoint time,
                                 double value) {
  std::unique_lock lock(mu_);
  return appendLocked(kind, key, time, value);
}

AppendSummary MetricCache::appendAll(std::span<const Sample> samples) {
  AppendSummary summary;
  std::unique_lock lock(mu_);
  for (const Sample& sample : samples) {
    if (appendLocked(sample.kind, sample.key, sample.time, sample.value)) {
      ++summary.appended;
    } else {
      ++summary.rejected;
    }
  }
  return summary;
}

Result<void> MetricCache::appendLocked(MetricKind kind, std::string_view key, TimePoint time,
                                       double value) {
  if (!fitsFloat(value)) {
    ++counters_.rejected_non_finite;
    return makeError(MetricCacheErrc::kNonFiniteValue);
  }
  auto object = objects_.find(key);
  SampleRing* ring = nullptr;
  if (object != objects_.end()) {
    for (KindSeries& entry : object->second.series) {
      if (entry.kind == kind) {
        ring = &entry.ring;
        break;
      }
    }
  }
  if (ring == nullptr) {
    if (!key.empty() && keyed_series_ >= options_.max_series) {
      ++counters_.rejected_series_limit;
      return makeError(MetricCacheErrc::kSeriesLimit);
    }
    if (object == objects_.end()) {
      object = objects_.emplace(std::string(key), ObjectSeries{}).first;
    }
    auto& series = object->second.series;
    series.push_back(KindSeries{kind, SampleRing(options_.capacityFor(kind))});
    ring = &series.back().ring;
    ++series_;
    if (!key.empty()) {
      ++keyed_series_;
    }
  }

  const std::int64_t time_ms = floorToMs(time);
  const std::int64_t step_reset_ms = toMs(options_.clock_step_reset);
  if (!ring->empty() && step_reset_ms > 0 && ring->newestTimeMs() - time_ms > step_reset_ms) {
    ring->clear();
    ++counters_.clock_step_resets;
  }
  switch (ring->push(time_ms, static_cast<float>(value))) {
    case SampleRing::Push::kOutOfOrder:
      ++counters_.rejected_out_of_order;
      return makeError(MetricCacheErrc::kOutOfOrder);
    case SampleRing::Push::kDuplicate:
      ++counters_.rejected_duplicate;
      return makeError(MetricCacheErrc::kDuplicateTimestamp);
    case SampleRing::Push::kAppended:
      break;
  }
  // Retention by the series' own newest time keeps GC's work small; the ring stays bounded even
  // if GC never runs.
  ring->dropBefore(time_ms - toMs(options_.retentionFor(kind)));
  ++counters_.appended;
  return {};
}

const SampleRing* MetricCache::findLocked(MetricKind kind, std::string_view key) const {
  const auto object = objects_.find(key);
  if (object == objects_.end()) {
    return nullptr;
  }
  for (const KindSeries& entry : object->second.series) {
    if (entry.kind == kind) {
      return &entry.ring;
    }
  }
  return nullptr;
}

std::optional<WindowSummary> MetricCache::summarizeLocked(const SampleRing& ring, TimePoint start,
                                                          TimePoint end,
                                                          std::vector<float>* values) const {
  const std::int64_t start_ms = ceilToMs(start);
  const std::int64_t end_ms = floorToMs(end);
  if (start_ms > end_ms) {
    return std::nullopt;
  }
  std::size_t i = ring.lowerBound(start_ms);
  if (i == ring.size() || ring.timeAt(i) > end_ms) {
    return std::nullopt;
  }
  WindowSummary summary;
  summary.first_time = fromMs(ring.timeAt(i));
  double sum = 0;
  std::int64_t last_ms = 0;
  float last_value = 0;
  for (; i < ring.size(); ++i) {
    const std::int64_t t = ring.timeAt(i);
    if (t > end_ms) {
      break;
    }
    last_ms = t;
    last_value = ring.valueAt(i);
    sum += last_value;
    ++summary.count;
    if (values != nullptr) {
      values->push_back(last_value);
    }
  }
  summary.last_time = fromMs(last_ms);
  summary.avg = sum / static_cast<double>(summary.count);
  summary.last = last_value;
  return summary;
}

std::optional<WindowAggregate> MetricCache::aggregate(MetricKind kind, std::string_view key,
                                                      TimePoint start, TimePoint end) const {
  std::vector<float> values;
  std::optional<WindowSummary> summary;
  {
    std::shared_lock lock(mu_);
    const SampleRing* ring = findLocked(kind, key);
    if (ring == nullptr) {
      return std::nullopt;
    }
    values.reserve(ring->size());
    summary = summarizeLocked(*ring, start, end, &values);
  }
  if (!summary) {
    return std::nullopt;
  }
  return withPercentiles(*summary, values);
}

std::optional<WindowSummary> MetricCache::summarize(MetricKind kind, std::string_view key,
                                                    TimePoint start, TimePoint end) const {
  std::shared_lock lock(mu_);
  const SampleRing* ring = findLocked(kind, key);
  if (ring == nullptr) {
    return std::nullopt;
  }
  return summarizeLocked(*ring, start, end, nullptr);
}

std::optional<TimedValue> MetricCache::last(MetricKind kind, std::string_view key) const {
  std::shared_lock lock(mu_);
  const SampleRing* ring = findLocked(kind, key);
  if (ring == nullptr || ring->empty()) {
    return std::nullopt;
  }
  return TimedValue{fromMs(ring->newestTimeMs()), ring->valueAt(ring->size() - 1)};
}

std::optional<TimedValue> MetricCache::lastWithin(MetricKind kind, std::string_view key,
                                                  std::chrono::nanoseconds max_age,
                                                  TimePoint now) const {
  auto newest = last(kind, key);
  if (!newest || now - newest->time > max_age) {
    return std::nullopt;
  }
  return newest;
}

GarbageReport MetricCache::collectGarbage(TimePoint now) {
  GarbageReport report;
  const std::int64_t now_ms = floorToMs(now);
  const std::int64_t expire_before = now_ms - toMs(options_.series_expire);
  std::unique_lock lock(mu_);
  for (auto object = objects_.begin(); object != objects_.end();) {
    auto& series = object->second.series;
    const bool keyed = !object->first.empty();
    for (auto entry = series.begin(); entry != series.end();) {
      SampleRing& ring = entry->ring;
      if (ring.empty() || ring.newestTimeMs() < expire_before) {
        report.points_removed += ring.size();
        ++report.series_removed;
        --series_;
        if (keyed) {
          --keyed_series_;
        }
        entry = series.erase(entry);
        continue;
      }
      report.points_removed += ring.dropBefore(now_ms - toMs(options_.retentionFor(entry->kind)));
      ring.shrinkIfSparse();
      ++entry;
    }
    if (series.empty()) {
      object = objects_.erase(object);
    } else {
      series.shrink_to_fit();
      ++object;
    }
  }
  return report;
}

bool MetricCache::removeSeries(MetricKind kind, std::string_view key) {
  std::unique_lock lock(mu_);
  const auto object = objects_.find(key);
  if (object == objects_.end()) {
    return false;
  }
  auto& series = object->second.series;
  for (auto entry = series.begin(); entry != series.end(); ++entry) {
    if (entry->kind == kind) {
      series.erase(entry);
      forgetSeries(key, 1);
      if (series.empty()) {
        objects_.erase(object);
      }
      return true;
    }
  }
  return false;
}

std::size_t MetricCache::removeObject(std::string_view key) {
  std::unique_lock lock(mu_);
  const auto object = objects_.find(key);
  if (object == objects_.end()) {
    return 0;
  }
  const std::size_t removed = object->second.series.size();
  objects_.erase(object);
  forgetSeries(key, removed);
  return removed;
}

void MetricCache::forgetSeries(std::string_view key, std::size_t count) {
  series_ -= count;
  if (!key.empty()) {
    keyed_series_ -= count;
  }
}

void MetricCache::forEachSeries(
    const std::function<void(MetricKind, std::string_view, const SampleRing&)>& visit) const {
  std::shared_lock lock(mu_);
  for (const auto& [key, object] : objects_) {
    for (const KindSeries& entry : object.series)
      visit(entry.kind, key, entry.ring);
  }
}

std::size_t MetricCache::seriesCount() const {
  std::shared_lock lock(mu_);
  return series_;
}

std::size_t MetricCache::approximateBytes() const {
  // libstdc++'s node: next pointer + cached hash + the pair; the key's heap block when it is too
  // long for the small-string buffer; the bucket array.
  constexpr std::size_t kNodeBytes =
      2 * sizeof(void*) + sizeof(std::pair<const std::string, ObjectSeries>);
  const std::size_t inline_capacity = std::string().capacity();
  std::shared_lock lock(mu_);
  std::size_t bytes = sizeof(MetricCache) + objects_.bucket_count() * sizeof(void*);
  for (const auto& [key, object] : objects_) {
    bytes += kNodeBytes + object.series.capacity() * sizeof(KindSeries);
    if (key.capacity() > inline_capacity) {
      bytes += key.capacity() + 1;
    }
    for (const KindSeries& entry : object.series) {
      bytes += entry.ring.allocatedBytes();
    }
  }
  return bytes;
}

MetricCacheStats MetricCache::stats() const {
  std::shared_lock lock(mu_);
  MetricCacheStats out = counters_;
  out.series = series_;
  out.points = 0;
  for (const auto& [key, object] : objects_) {
    for (const KindSeries& entry : object.series) {
      out.points += entry.ring.size();
    }
  }
  return out;
}

}  // namespace koord::roles::koordlet::metriccache
