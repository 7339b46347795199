#include "prediction/histogram.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

namespace koord::roles::koordlet::prediction {

namespace {

// Koordinator's MinSampleWeight 0.1 and epsilon = 0.001 * MinSampleWeight.
constexpr double kEpsilon = 0.001 * 0.1;
constexpr double kBucketGrowth = 1.05;
// Past 2^100 the weights are renormalised.
constexpr double kMaxDecayExponent = 100;

double logBase(double base, double x) {
  return std::log(x) / std::log(base);
}

double secondsOf(std::chrono::nanoseconds d) {
  return std::chrono::duration<double>(d).count();
}

// Go's int(math.Floor(x + 0.5)), bounded so the exponent stays an int.
int roundExponent(double x) {
  return static_cast<int>(std::clamp(std::floor(x + 0.5), -4096.0, 4096.0));
}

// Go's Time.Round(d): the multiple of d nearest to t, halves rounded up. Relative to the Unix
// epoch rather than Go's year 1: only differences between references ever matter.
TimePoint roundTo(TimePoint t, std::chrono::nanoseconds d) {
  auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
  auto step = d.count();
  auto q = ns / step;
  auto r = ns % step;
  if (r < 0) {
    r += step;
    --q;
  }
  if (r >= step - r)
    ++q;
  return TimePoint(
      std::chrono::duration_cast<TimePoint::duration>(std::chrono::nanoseconds(q * step)));
}

}  // namespace

ExponentialBuckets::ExponentialBuckets(double max_value, double first_bucket_size, double ratio,
                                       double epsilon)
    : first_(first_bucket_size), ratio_(ratio), epsilon_(epsilon) {
  if (!(max_value > 0) || !(first_bucket_size > 0) || !(ratio > 1) || !(epsilon > 0))
    throw std::invalid_argument(
        "histogram buckets: max value, first bucket size and epsilon must be > 0, ratio > 1");
  num_buckets_ =
      static_cast<int>(std::ceil(logBase(ratio, max_value * (ratio - 1) / first_bucket_size + 1))) +
      1;
}

int ExponentialBuckets::findBucket(double value) const {
  if (!(value >= first_))
    return 0;
  double b = logBase(ratio_, value * (ratio_ - 1) / first_ + 1);
  if (!(b < num_buckets_ - 1))
    return num_buckets_ - 1;
  return static_cast<int>(b);
}

double ExponentialBuckets::bucketStart(int bucket) const {
  if (bucket <= 0)
    return 0.0;
  return first_ * (std::pow(ratio_, bucket) - 1) / (ratio_ - 1);
}

const ExponentialBuckets& cpuBuckets() {
  static const ExponentialBuckets kBuckets(1024, 0.025, kBucketGrowth, kEpsilon);
  return kBuckets;
}

const ExponentialBuckets& memoryBuckets() {
  static const ExponentialBuckets kBuckets(static_cast<double>(std::int64_t{1} << 41),
                                           static_cast<double>(std::int64_t{5} << 20),
                                           kBucketGrowth, kEpsilon);
  return kBuckets;
}

DecayingHistogram::DecayingHistogram(const ExponentialBuckets& buckets,
                                     std::chrono::nanoseconds half_life)
    : buckets_(&buckets),
      half_life_(half_life),
      weights_(static_cast<std::size_t>(buckets.numBuckets()), 0.0),
      min_bucket_(buckets.numBuckets() - 1) {}

void DecayingHistogram::addSample(double value, double weight, TimePoint time) {
  if (!std::isfinite(value) || !(weight >= 0))
    return;
  double w = weight * decayFactor(time);
  int bucket = buckets_->findBucket(value);
  auto& bw = weights_[static_cast<std::size_t>(bucket)];
  bw += w;
  total_weight_ += w;
  if (bucket < min_bucket_ && bw >= buckets_->epsilon())
    min_bucket_ = bucket;
  if (bucket > max_bucket_ && bw >= buckets_->epsilon())
    max_bucket_ = bucket;
}

double DecayingHistogram::percentile(double p) const {
  if (empty())
    return 0.0;
  double partial = 0;
  double threshold = p * total_weight_;
  int bucket = min_bucket_;
  for (; bucket < max_bucket_; ++bucket) {
    partial += weights_[static_cast<std::size_t>(bucket)];
    if (partial >= threshold)
      break;
  }
  if (bucket < buckets_->numBuckets() - 1)
    return buckets_->bucketStart(bucket + 1);
  return buckets_->bucketStart(bucket);
}

bool DecayingHistogram::empty() const {
  return weights_[static_cast<std::size_t>(min_bucket_)] < buckets_->epsilon();
}

double DecayingHistogram::decayFactor(TimePoint time) {
  if (!reference_) {
    // Nothing to rescale yet: the first sample only fixes the reference.
    reference_ = roundTo(time, half_life_);
  } else if (secondsOf(time - *reference_) > kMaxDecayExponent * secondsOf(half_life_)) {
    shiftReference(time);
  }
  return std::exp2(secondsOf(time - *reference_) / secondsOf(half_life_));
}

void DecayingHistogram::shiftReference(TimePoint new_reference) {
  new_reference = roundTo(new_reference, half_life_);
  int exponent = roundExponent(secondsOf(*reference_ - new_reference) / secondsOf(half_life_));
  scale(std::ldexp(1.0, exponent));
  reference_ = new_reference;
}

void DecayingHistogram::scale(double factor) {
  for (int b = min_bucket_; b <= max_bucket_; ++b)
    weights_[static_cast<std::size_t>(b)] *= factor;
  total_weight_ *= factor;
  updateMinMax();
}

void DecayingHistogram::updateMinMax() {
  const double eps = buckets_->epsilon();
  const int last = buckets_->numBuckets() - 1;
  while (weights_[static_cast<std::size_t>(min_bucket_)] < eps && min_bucket_ < last)
    ++min_bucket_;
  while (weights_[static_cast<std::size_t>(max_bucket_)] < eps && max_bucket_ > 0)
    --max_bucket_;
}

HistogramCheckpoint DecayingHistogram::save() const {
  HistogramCheckpoint out;
  out.reference_time = reference_;
  out.total_weight = total_weight_;
  double max = 0;
  for (int b = min_bucket_; b <= max_bucket_; ++b)
    max = std::max(max, weights_[static_cast<std::size_t>(b)]);
  if (!(max > 0))
    return out;
  const double ratio = kMaxCheckpointWeight / max;
  for (int b = min_bucket_; b <= max_bucket_; ++b) {
    double scaled = std::floor(weights_[static_cast<std::size_t>(b)] * ratio + 0.5);
    if (scaled >= 1)
      out.buckets.emplace_back(static_cast<std::uint32_t>(b), static_cast<std::uint32_t>(scaled));
  }
  return out;
}

Expected<void> DecayingHistogram::load(const HistogramCheckpoint& c) {
  const auto n = static_cast<std::uint32_t>(buckets_->numBuckets());
  if (!std::isfinite(c.total_weight) || c.total_weight < 0)
    return invalidArgument(
        fmt::format("total weight {} is not a finite non-negative number", c.total_weight));
  if (c.buckets.size() > n)
    return invalidArgument(
        fmt::format("{} buckets, more than the layout's {}", c.buckets.size(), n));
  if (!c.buckets.empty() && !c.reference_time)
    return invalidArgument("buckets without a reference time");
  std::uint64_t sum = 0;
  for (std::size_t i = 0; i < c.buckets.size(); ++i) {
    auto [bucket, weight] = c.buckets[i];
    if (bucket >= n)
      return invalidArgument(fmt::format("bucket {} is beyond the layout's {}", bucket, n));
    if (i > 0 && bucket <= c.buckets[i - 1].first)
      return invalidArgument(fmt::format("bucket {} repeated or out of order", bucket));
    if (weight == 0 || weight > kMaxCheckpointWeight)
      return invalidArgument(fmt::format("bucket {} weight {} is not in [1, {}]", bucket, weight,
                                         kMaxCheckpointWeight));
    sum += weight;
  }
  std::fill(weights_.begin(), weights_.end(), 0.0);
  total_weight_ = 0;
  min_bucket_ = buckets_->numBuckets() - 1;
  max_bucket_ = 0;
  reference_ = c.reference_time;
  if (sum == 0)
    return {};
  const double ratio = c.total_weight / static_cast<double>(sum);
  for (auto [bucket, weight] : c.buckets) {
    int b = static_cast<int>(bucket);
    weights_[bucket] = weight * ratio;
    min_bucket_ = std::min(min_bucket_, b);
    max_bucket_ = std::max(max_bucket_, b);
  }
  total_weight_ = c.total_weight;
  return {};
}

}  // namespace koord::roles::koordlet::prediction
