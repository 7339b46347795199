// GpuFastView's words: [0] usable, count, devices with free and the nonzero mask; [1] the card
// memory; then the total and free sums; then each card's free gpu-core, gpu-memory, ratio.
#include "plugins/deviceshare/gpu_fast_view.h"

#include <string>

#include "plugins/deviceshare/allocator.h"

namespace koord::roles::scheduler::deviceshare {

namespace {

// A reader gives up after this many overlapping writes and takes the node's lock instead.
constexpr int kReadAttempts = 8;

std::int64_t packHeader(bool usable, std::uint32_t count, std::uint32_t with_free,
                        std::uint32_t nonzero) {
  const std::uint64_t w = (usable ? 1u : 0u) | (std::uint64_t{count & 0xffu} << 8) |
                          (std::uint64_t{with_free & 0xffu} << 16) | (std::uint64_t{nonzero} << 32);
  return static_cast<std::int64_t>(w);
}

}  // namespace

void GpuFastView::publish(const NodeDeviceState& state) {
  const auto& gpus = state.devices(DeviceType::kGPU);
  const DeviceTypeSummary& summary = state.summary(DeviceType::kGPU);
  const std::optional<std::int64_t> card_memory = state.gpuCardMemory();
  const bool usable = state.hasDeviceObject() && !gpus.empty() && gpus.size() <= kMaxGpus &&
                      card_memory.has_value();

  const std::uint32_t s = seq_.load(std::memory_order_relaxed);
  seq_.store(s + 1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  std::uint32_t nonzero = 0;
  if (usable) {
    for (std::size_t i = 0; i < gpus.size(); ++i) {
      const DeviceResources& f = gpus[i].free;
      if (!f.isZero())
        nonzero |= 1u << i;
      std::atomic<std::int64_t>* d = &words_[kHeaderWords + 3 * i];
      d[0].store(f.get(DeviceResource::kGPUCore), std::memory_order_relaxed);
      d[1].store(f.get(DeviceResource::kGPUMemory), std::memory_order_relaxed);
      d[2].store(f.get(DeviceResource::kGPUMemoryRatio), std::memory_order_relaxed);
    }
    words_[1].store(*card_memory, std::memory_order_relaxed);
    for (std::size_t r = 0; r < kDeviceResourceCount; ++r) {
      words_[2 + r].store(summary.total_sum.amount[r], std::memory_order_relaxed);
      words_[2 + kDeviceResourceCount + r].store(summary.free_sum.amount[r],
                                                 std::memory_order_relaxed);
    }
  }
  words_[0].store(packHeader(usable, static_cast<std::uint32_t>(gpus.size()),
                             summary.devices_with_free, nonzero),
                  std::memory_order_relaxed);
  seq_.store(s + 2, std::memory_order_release);
}

bool GpuFastView::read(Snapshot& out) const {
  for (int attempt = 0; attempt < kReadAttempts; ++attempt) {
    const std::uint32_t s1 = seq_.load(std::memory_order_acquire);
    if ((s1 & 1u) != 0)
      continue;
    const auto header = static_cast<std::uint64_t>(words_[0].load(std::memory_order_relaxed));
    out.usable = (header & 1u) != 0;
    if (out.usable) {
      out.count = static_cast<std::uint32_t>((header >> 8) & 0xffu);
      out.devices_with_free = static_cast<std::uint32_t>((header >> 16) & 0xffu);
      out.nonzero = static_cast<std::uint32_t>(header >> 32);
      out.card_memory = words_[1].load(std::memory_order_relaxed);
      for (std::size_t r = 0; r < kDeviceResourceCount; ++r) {
        out.total_sum.amount[r] = words_[2 + r].load(std::memory_order_relaxed);
        out.free_sum.amount[r] =
            words_[2 + kDeviceResourceCount + r].load(std::memory_order_relaxed);
      }
      for (std::size_t i = 0; i < out.count && i < kMaxGpus; ++i) {
        const std::atomic<std::int64_t>* d = &words_[kHeaderWords + 3 * i];
        out.free[i] =
            Gpu{d[0].load(std::memory_order_relaxed), d[1].load(std::memory_order_relaxed),
                d[2].load(std::memory_order_relaxed)};
      }
    }
    std::atomic_thread_fence(std::memory_order_acquire);
    if (seq_.load(std::memory_order_relaxed) == s1)
      return out.usable;
  }
  return false;
}

std::optional<Status> checkGpusFast(const GpuFastView::Snapshot& view,
                                    const DeviceResources& asked) {
  DeviceResources want;
  std::int64_t count = 0;
  if (!gpuDemand(view.card_memory, asked, want, count).ok())
    return std::nullopt;
  // enoughFit: cards with anything free on which each amount of the request fits (the request
  // names GPU resources alone, so the other amounts fit anywhere).
  std::int64_t fit = 0;
  for (std::uint32_t i = 0; i < view.count && fit < count; ++i) {
    const GpuFastView::Gpu& g = view.free[i];
    fit += ((view.nonzero >> i) & 1u) != 0 && want.get(DeviceResource::kGPUCore) <= g.core &&
           want.get(DeviceResource::kGPUMemory) <= g.memory &&
           want.get(DeviceResource::kGPUMemoryRatio) <= g.ratio;
  }
  if (fit >= count)
    return Status::success();
  return Status::unschedulable("Insufficient gpu devices");
}

std::optional<std::int64_t> scoreGpusFast(const GpuFastView::Snapshot& view,
                                          const DeviceResources& asked,
                                          const DeviceScorer& scorer) {
  DeviceResources want;
  std::int64_t count = 0;
  if (!gpuDemand(view.card_memory, asked, want, count).ok())
    return std::nullopt;
  if (view.devices_with_free == 0)
    return 0;
  return scorer.scoreDevice(want, view.total_sum, view.free_sum);
}

}  // namespace koord::roles::scheduler::deviceshare
