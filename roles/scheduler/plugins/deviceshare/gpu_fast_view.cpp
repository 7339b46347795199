// GpuFastView's words: [0] the flags, card count, cards with anything free and the nonzero mask;
// [1] the card memory; then the node's total and free sums of the resources before the NPU ones,
// which only Score reads; then per card gpu-core and ratio (32 bits each) and gpu-memory, which
// only Filter reads. A node with NPU amounts is read through its lock (the view has no words for
// them).
#include "plugins/deviceshare/gpu_fast_view.h"

#include <limits>
#include <string>

#include "plugins/deviceshare/allocator.h"

namespace koord::roles::scheduler::deviceshare {

namespace {

// A reader gives up after this many overlapping writes and takes the node's lock instead.
constexpr int kReadAttempts = 8;

constexpr std::uint64_t kPublished = 1u << 0;
constexpr std::uint64_t kPresent = 1u << 1;
constexpr std::uint64_t kUsable = 1u << 2;

bool fits32(std::int64_t v) {
  return v >= 0 && v <= std::numeric_limits<std::int32_t>::max();
}

std::int64_t packPair(std::int64_t low, std::int64_t high) {
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(low) |
                                   (static_cast<std::uint64_t>(high) << 32));
}

}  // namespace

void GpuFastView::publish(const NodeDeviceState& state, bool present) {
  const auto& gpus = state.devices(DeviceType::kGPU);
  const DeviceTypeSummary& summary = state.summary(DeviceType::kGPU);
  const std::optional<std::int64_t> card_memory = state.gpuCardMemory();
  bool usable = present && state.hasDeviceObject() && !gpus.empty() && gpus.size() <= kMaxGpus &&
                card_memory.has_value();
  for (std::size_t r = kViewedResourceCount; usable && r < kDeviceResourceCount; ++r)
    usable = summary.total_sum.amount[r] == 0;
  for (std::size_t i = 0; usable && i < gpus.size(); ++i) {
    usable = fits32(gpus[i].free.get(DeviceResource::kGPUCore)) &&
             fits32(gpus[i].free.get(DeviceResource::kGPUMemoryRatio));
  }

  // The words are stored with release and loaded with acquire (no standalone fences, which
  // ThreadSanitizer cannot follow): a reader that loads any word of this write also sees the odd
  // sequence stored before it, and retries.
  const std::uint32_t s = seq_.load(std::memory_order_relaxed);
  seq_.store(s + 1, std::memory_order_relaxed);
  std::uint64_t header = kPublished | (present ? kPresent : 0);
  if (usable) {
    std::uint64_t nonzero = 0;
    for (std::size_t i = 0; i < gpus.size(); ++i) {
      const DeviceResources& f = gpus[i].free;
      if (!f.isZero())
        nonzero |= std::uint64_t{1} << i;
      std::atomic<std::int64_t>* card = &words_[kCardsAt + kCardWords * i];
      card[0].store(
          packPair(f.get(DeviceResource::kGPUCore), f.get(DeviceResource::kGPUMemoryRatio)),
          std::memory_order_release);
      card[1].store(f.get(DeviceResource::kGPUMemory), std::memory_order_release);
    }
    words_[1].store(*card_memory, std::memory_order_release);
    for (std::size_t r = 0; r < kViewedResourceCount; ++r) {
      words_[kSumsAt + r].store(summary.total_sum.amount[r], std::memory_order_release);
      words_[kSumsAt + kViewedResourceCount + r].store(summary.free_sum.amount[r],
                                                       std::memory_order_release);
    }
    header |= kUsable | (std::uint64_t{gpus.size() & 0xffu} << 8) |
              (std::uint64_t{summary.devices_with_free & 0xffu} << 16) | (nonzero << 32);
  }
  words_[0].store(static_cast<std::int64_t>(header), std::memory_order_release);
  seq_.store(s + 2, std::memory_order_release);
}

GpuFastView::Read GpuFastView::read(Snapshot& out, Part part) const {
  for (int attempt = 0; attempt < kReadAttempts; ++attempt) {
    const std::uint32_t s1 = seq_.load(std::memory_order_acquire);
    if ((s1 & 1u) != 0)
      continue;
    const auto header = static_cast<std::uint64_t>(words_[0].load(std::memory_order_acquire));
    Read answer = Read::kUnknown;
    if ((header & kPublished) != 0 && (header & kPresent) == 0) {
      answer = Read::kAbsent;
    } else if ((header & kUsable) != 0) {
      answer = Read::kUsable;
      out.count = static_cast<std::uint32_t>((header >> 8) & 0xffu);
      out.devices_with_free = static_cast<std::uint32_t>((header >> 16) & 0xffu);
      out.nonzero = static_cast<std::uint32_t>(header >> 32);
      out.card_memory = words_[1].load(std::memory_order_acquire);
      if (part == Part::kCards) {
        for (std::size_t i = 0; i < out.count && i < kMaxGpus; ++i) {
          const std::atomic<std::int64_t>* card = &words_[kCardsAt + kCardWords * i];
          const auto pair = static_cast<std::uint64_t>(card[0].load(std::memory_order_acquire));
          out.free[i] =
              Gpu{static_cast<std::int64_t>(pair & 0xffffffffu),
                  card[1].load(std::memory_order_acquire), static_cast<std::int64_t>(pair >> 32)};
        }
      } else {
        for (std::size_t r = 0; r < kViewedResourceCount; ++r) {
          out.total_sum.amount[r] = words_[kSumsAt + r].load(std::memory_order_acquire);
          out.free_sum.amount[r] =
              words_[kSumsAt + kViewedResourceCount + r].load(std::memory_order_acquire);
        }
      }
    }
    if (seq_.load(std::memory_order_relaxed) == s1)
      return answer;
  }
  return Read::kUnknown;
}

bool GpuDemandMemo::demandOn(std::int64_t card_memory, const DeviceResources& asked,
                             GpuDemand& out) const {
  if (state_.load(std::memory_order_acquire) == kReady && card_memory_ == card_memory) {
    out = demand_;
    return true;
  }
  if (!gpuDemand(card_memory, asked, out.per_device, out.count).ok())
    return false;
  int expected = kEmpty;
  if (state_.compare_exchange_strong(expected, kWriting, std::memory_order_acq_rel)) {
    card_memory_ = card_memory;
    demand_ = out;
    state_.store(kReady, std::memory_order_release);
  }
  return true;
}

Status checkGpusFast(const GpuFastView::Snapshot& view, const GpuDemand& demand) {
  // enoughFit: cards with anything free on which each amount of the request fits (the request
  // names GPU resources alone, so the other amounts fit anywhere).
  const DeviceResources& want = demand.per_device;
  std::int64_t fit = 0;
  for (std::uint32_t i = 0; i < view.count && fit < demand.count; ++i) {
    const GpuFastView::Gpu& g = view.free[i];
    fit += ((view.nonzero >> i) & 1u) != 0 && want.get(DeviceResource::kGPUCore) <= g.core &&
           want.get(DeviceResource::kGPUMemory) <= g.memory &&
           want.get(DeviceResource::kGPUMemoryRatio) <= g.ratio;
  }
  if (fit >= demand.count)
    return Status::success();
  return Status::unschedulable("Insufficient gpu devices");
}

std::int64_t scoreGpusFast(const GpuFastView::Snapshot& view, const GpuDemand& demand,
                           const DeviceScorer& scorer) {
  if (view.devices_with_free == 0)
    return 0;
  return scorer.scoreDevice(demand.per_device, view.total_sum, view.free_sum);
}

}  // namespace koord::roles::scheduler::deviceshare
