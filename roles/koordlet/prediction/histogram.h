// The peak predictor's usage distribution: Koordinator's (the VPA's) histogram with exponentially
// sized buckets whose sample weights halve every half-life, and its checkpoint form.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "koord/core/expected.h"

namespace koord::roles::koordlet::prediction {

using TimePoint = std::chrono::system_clock::time_point;

/// Bucket 0 is [0, first); bucket n >= 1 starts at first * (ratio^n - 1) / (ratio - 1); the
/// last one starts at or past max_value and has no end. A bucket lighter than epsilon is empty.
class ExponentialBuckets {
 public:
  /// Throws std::invalid_argument unless max_value > 0, first > 0, ratio > 1 and epsilon > 0.
  ExponentialBuckets(double max_value, double first_bucket_size, double ratio, double epsilon);

  int numBuckets() const { return num_buckets_; }
  /// The bucket a value falls in; below the first bucket is 0, beyond the last is the last.
  int findBucket(double value) const;
  /// Precondition: 0 <= bucket < numBuckets().
  double bucketStart(int bucket) const;
  double epsilon() const { return epsilon_; }

 private:
  int num_buckets_;
  double first_;
  double ratio_;
  double epsilon_;
};

/// Koordinator's CPU layout, in cores: buckets from 0.025 growing by 5% up to 1024 cores.
const ExponentialBuckets& cpuBuckets();
/// Memory in bytes: from 5 MiB growing by 5% up to 2 TiB. Koordinator v1.5 stopped at 2 GiB,
/// so every pod or node above it read as 2 GiB; upstream raised it to 2 TiB later (#2540).
const ExponentialBuckets& memoryBuckets();

/// Weights are stored relative: the heaviest bucket as kMaxCheckpointWeight, the others
/// rounded in proportion, with the real total beside them.
inline constexpr std::uint32_t kMaxCheckpointWeight = 10000;

struct HistogramCheckpoint {
  /// The decay's reference time; nullopt for a histogram that never had a sample.
  std::optional<TimePoint> reference_time;
  double total_weight = 0;
  /// (bucket, relative weight in [1, kMaxCheckpointWeight]), buckets strictly ascending.
  std::vector<std::pair<std::uint32_t, std::uint32_t>> buckets;
  friend bool operator==(const HistogramCheckpoint&, const HistogramCheckpoint&) = default;
};

/// A sample's weight is multiplied by 2^((time - reference) / half_life), so a sample one
/// half-life older counts half as much. Weights only matter relative to each other; when the
/// factor would pass 2^100 the reference moves forward and every weight is scaled down.
/// Not thread-safe.
class DecayingHistogram {
 public:
  /// `buckets` must outlive the histogram. Precondition: half_life > 0.
  DecayingHistogram(const ExponentialBuckets& buckets, std::chrono::nanoseconds half_life);

  /// Precondition: weight >= 0. Non-finite values are ignored.
  void addSample(double value, double weight, TimePoint time);
  /// The end of the bucket where the cumulative weight first reaches p * total (the start of
  /// the last bucket when it is that one); 0 for an empty histogram. p in [0, 1].
  double percentile(double p) const;
  bool empty() const;
  double totalWeight() const { return total_weight_; }
  std::optional<TimePoint> referenceTime() const { return reference_; }

  HistogramCheckpoint save() const;
  /// Replaces the content with a checkpoint's. Refused, with the histogram unchanged, when a
  /// bucket is out of this layout or repeated or out of order, a weight is 0 or above
  /// kMaxCheckpointWeight, the total weight is negative or not finite, there are buckets but
  /// no reference time, or there are more buckets than the layout has.
  Expected<void> load(const HistogramCheckpoint& checkpoint);

 private:
  double decayFactor(TimePoint time);
  void shiftReference(TimePoint new_reference);
  void scale(double factor);
  void updateMinMax();

  const ExponentialBuckets* buckets_;
  std::chrono::nanoseconds half_life_;
  std::optional<TimePoint> reference_;
  std::vector<double> weights_;
  double total_weight_ = 0;
  int min_bucket_;
  int max_bucket_ = 0;
};

}  // namespace koord::roles::koordlet::prediction
