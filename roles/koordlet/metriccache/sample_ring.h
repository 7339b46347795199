// One series' samples: a fixed-capacity ring of 8-byte points (32-bit millisecond offset from a
// per-series base, float value) that grows lazily to its capacity and overwrites its oldest point.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

namespace koord::roles::koordlet::metriccache {

/// Precision of the float value: a 24-bit significand keeps relative error under 6e-8, i.e.
/// under 64 KiB for 1 TiB and under 1 MiB up to 16 TiB of memory, and under 1e-4 cores up to 1000
/// cores; double would cost 50% more memory for precision nobody reads. Aggregates are summed in
/// double. Not thread-safe: MetricCache guards it.
class SampleRing {
 public:
  enum class Push { kAppended, kOutOfOrder, kDuplicate };

  /// capacity > 0: the most points ever held.
  explicit SampleRing(std::uint32_t capacity);
  SampleRing(SampleRing&&) noexcept = default;
  SampleRing& operator=(SampleRing&&) noexcept = default;

  /// Appends a point strictly newer than the newest one; an older or equal time is refused and
  /// nothing changes. When full, the oldest point falls off.
  Push push(std::int64_t time_ms, float value);
  /// Drops the points older than cutoff_ms; returns how many.
  std::size_t dropBefore(std::int64_t cutoff_ms);
  void clear();
  /// Gives memory back when at most a quarter of the slots are in use (after GC trimmed points).
  void shrinkIfSparse();

  std::size_t size() const { return count_; }
  bool empty() const { return count_ == 0; }
  std::uint32_t capacity() const { return capacity_; }
  /// Index 0 is the oldest point; i < size().
  std::int64_t timeAt(std::size_t i) const { return base_ms_ + slot(i).offset_ms; }
  float valueAt(std::size_t i) const { return slot(i).value; }
  std::int64_t newestTimeMs() const { return timeAt(count_ - 1); }
  /// The index of the first point at or after time_ms; size() when there is none.
  std::size_t lowerBound(std::int64_t time_ms) const;
  std::size_t allocatedBytes() const { return std::size_t{allocated_} * sizeof(Point); }

 private:
  struct Point {
    std::uint32_t offset_ms;
    float value;
  };
  static_assert(sizeof(Point) == 8);

  const Point& slot(std::size_t i) const { return slots_[(head_ + i) % allocated_]; }
  void reallocate(std::uint32_t slots);
  void rebaseFor(std::int64_t time_ms);

  std::unique_ptr<Point[]> slots_;
  std::int64_t base_ms_ = 0;
  std::uint32_t capacity_;
  std::uint32_t allocated_ = 0;
  std::uint32_t head_ = 0;
  std::uint32_t count_ = 0;
};

}  // namespace koord::roles::koordlet::metriccache
