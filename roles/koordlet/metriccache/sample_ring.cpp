#include "metriccache/sample_ring.h"

#include <algorithm>
#include <limits>

namespace koord::roles::koordlet::metriccache {
namespace {

// Small enough that a pod seen for a few seconds costs little, large enough to avoid many
// early reallocations.
constexpr std::uint32_t kMinSlots = 16;
constexpr std::int64_t kMaxOffsetMs = std::numeric_limits<std::uint32_t>::max();

}  // namespace

SampleRing::SampleRing(std::uint32_t capacity) : capacity_(std::max<std::uint32_t>(capacity, 1)) {}

SampleRing::Push SampleRing::push(std::int64_t time_ms, float value) {
  if (count_ > 0) {
    const std::int64_t newest = newestTimeMs();
    if (time_ms == newest) {
      return Push::kDuplicate;
    }
    if (time_ms < newest) {
      return Push::kOutOfOrder;
    }
    if (time_ms - base_ms_ > kMaxOffsetMs) {
      rebaseFor(time_ms);
    }
  }
  if (count_ == 0) {
    base_ms_ = time_ms;
    head_ = 0;
  }
  if (count_ == allocated_ && allocated_ < capacity_) {
    reallocate(std::min(capacity_, std::max(kMinSlots, allocated_ * 2)));
  }
  const Point point{static_cast<std::uint32_t>(time_ms - base_ms_), value};
  if (count_ == allocated_) {
    // Full at capacity: the new point takes the oldest point's slot.
    slots_[head_] = point;
    head_ = (head_ + 1) % allocated_;
    return Push::kAppended;
  }
  slots_[(head_ + count_) % allocated_] = point;
  ++count_;
  return Push::kAppended;
}

std::size_t SampleRing::dropBefore(std::int64_t cutoff_ms) {
  std::size_t dropped = 0;
  while (count_ > 0 && timeAt(0) < cutoff_ms) {
    head_ = (head_ + 1) % allocated_;
    --count_;
    ++dropped;
  }
  if (count_ == 0) {
    head_ = 0;
  }
  return dropped;
}

void SampleRing::clear() {
  count_ = 0;
  head_ = 0;
}

void SampleRing::shrinkIfSparse() {
  if (allocated_ <= kMinSlots || count_ > allocated_ / 4) {
    return;
  }
  reallocate(std::max(kMinSlots, count_ * 2));
}

std::size_t SampleRing::lowerBound(std::int64_t time_ms) const {
  std::size_t lo = 0;
  std::size_t hi = count_;
  while (lo < hi) {
    const std::size_t mid = lo + (hi - lo) / 2;
    if (timeAt(mid) < time_ms) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

void SampleRing::reallocate(std::uint32_t slots) {
  auto fresh = std::make_unique<Point[]>(slots);
  for (std::uint32_t i = 0; i < count_; ++i) {
    fresh[i] = slot(i);
  }
  slots_ = std::move(fresh);
  allocated_ = slots;
  head_ = 0;
}

// Offsets are 32-bit (49.7 days); a series that lives longer moves its base up to its oldest
// point, dropping points that are themselves more than 49.7 days older than the new one.
void SampleRing::rebaseFor(std::int64_t time_ms) {
  while (count_ > 0 && time_ms - timeAt(0) > kMaxOffsetMs) {
    head_ = (head_ + 1) % allocated_;
    --count_;
  }
  if (count_ == 0) {
    return;  // push() sets the base from the new point.
  }
  const std::int64_t new_base = timeAt(0);
  const auto shift = static_cast<std::uint32_t>(new_base - base_ms_);
  for (std::uint32_t i = 0; i < count_; ++i) {
    slots_[(head_ + i) % allocated_].offset_ms -= shift;
  }
  base_ms_ = new_base;
}

}  // namespace koord::roles::koordlet::metriccache
