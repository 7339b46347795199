// A node's GPUs as Filter and Score read them for a pod asking GPUs alone: each card's free
// amounts and the node's sums, republished by the writer under the node's lock, read without it.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>

#include "framework/status.h"
#include "plugins/deviceshare/device_resources.h"
#include "plugins/deviceshare/node_device_state.h"
#include "plugins/deviceshare/scoring.h"

namespace koord::roles::scheduler::deviceshare {

/// A sequence lock over atomic words: one writer at a time (the caller serialises them: the
/// node's exclusive lock), readers retry while a write is under way and never block it. Aligned
/// to a cache line, so that Score's read (header, card memory, sums) touches two lines.
class alignas(64) GpuFastView {
 public:
  /// Nodes with more cards than this are read through the node's lock.
  static constexpr std::size_t kMaxGpus = 16;

  /// One card's free amounts (filled for the first `count` cards only).
  struct Gpu {
    std::int64_t core;
    std::int64_t memory;
    std::int64_t ratio;
  };
  struct Snapshot {
    std::uint32_t count = 0;
    std::uint32_t devices_with_free = 0;
    /// Bit per card (by position, ascending minor): anything free at all.
    std::uint32_t nonzero = 0;
    std::int64_t card_memory = 0;
    DeviceResources total_sum;
    DeviceResources free_sum;
    std::array<Gpu, kMaxGpus> free;
  };
  enum class Read : std::uint8_t {
    /// Read the node's whole state: nothing published yet, a write kept overlapping the read,
    /// or a node the view cannot describe (no card offering anything, too many cards, amounts
    /// past the view's fields).
    kUnknown,
    /// The node has no device accounting (DeviceCache's absent entry): every pod passes.
    kAbsent,
    kUsable,
  };

  /// What a reader loads besides the header and card memory: Filter the cards, Score the
  /// node's sums (each only the cache lines it needs).
  enum class Part : std::uint8_t { kCards, kSums };

  /// Under the node's exclusive lock, after every change of `state` or of its presence.
  void publish(const NodeDeviceState& state, bool present);
  Read read(Snapshot& out, Part part) const;

 private:
  static constexpr std::size_t kCardWords = 2;  // gpu-core and ratio in one, gpu-memory
  static constexpr std::size_t kSumsAt = 2;
  static constexpr std::size_t kCardsAt = kSumsAt + 2 * kViewedResourceCount;
  static constexpr std::size_t kWords = kCardsAt + kCardWords * kMaxGpus;
  std::atomic<std::uint32_t> seq_{0};
  std::array<std::atomic<std::int64_t>, kWords> words_{};
};

/// A pod's GPU demand on cards of one memory size: gpuDemand's request per card and card count.
struct GpuDemand {
  DeviceResources per_device;
  std::int64_t count = 0;
};

/// The demand on the first card memory a cycle meets, computed once by whichever Filter or Score
/// gets there first and read by the others (a node pool has one card model); other card
/// memories are computed at each node. Thread-safe; a copy (a cloned CycleState) starts empty.
class GpuDemandMemo {
 public:
  GpuDemandMemo() = default;
  GpuDemandMemo(const GpuDemandMemo&) {}
  GpuDemandMemo& operator=(const GpuDemandMemo&) = delete;

  /// gpuDemand(card_memory, asked), through the memo; false where gpuDemand refuses (the whole
  /// state words the refusal).
  bool demandOn(std::int64_t card_memory, const DeviceResources& asked, GpuDemand& out) const;

 private:
  enum : int { kEmpty, kWriting, kReady };
  mutable std::atomic<int> state_{kEmpty};
  mutable std::int64_t card_memory_ = 0;  // written once, before state_ turns kReady
  mutable GpuDemand demand_;              // likewise
};

/// Filter for a pod whose requests are GPUs alone, with no devices released by preemption and no
/// NUMA restriction: enoughFit over the view's cards.
Status checkGpusFast(const GpuFastView::Snapshot& view, const GpuDemand& demand);
/// Score likewise: scoreNode's answer for such a pod.
std::int64_t scoreGpusFast(const GpuFastView::Snapshot& view, const GpuDemand& demand,
                           const DeviceScorer& scorer);

}  // namespace koord::roles::scheduler::deviceshare
