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
/// node's exclusive lock), readers retry while a write is under way and never block it.
class GpuFastView {
 public:
  /// Nodes with more cards than this are read through the node's lock.
  static constexpr std::size_t kMaxGpus = 16;

  struct Gpu {
    std::int64_t core = 0;
    std::int64_t memory = 0;
    std::int64_t ratio = 0;
  };
  /// What a reader gets: usable only where the node has GPUs, a card memory, at most kMaxGpus
  /// cards, and had a Device object.
  struct Snapshot {
    bool usable = false;
    std::uint32_t count = 0;
    std::uint32_t devices_with_free = 0;
    /// Bit per card (by position, ascending minor): anything free at all.
    std::uint32_t nonzero = 0;
    std::int64_t card_memory = 0;
    DeviceResources total_sum;
    DeviceResources free_sum;
    std::array<Gpu, kMaxGpus> free{};
  };

  /// Under the node's exclusive lock, after every change of `state`.
  void publish(const NodeDeviceState& state);
  /// False when the view is not usable or a write kept overlapping the read.
  bool read(Snapshot& out) const;

 private:
  static constexpr std::size_t kHeaderWords = 2 + 2 * kDeviceResourceCount;
  static constexpr std::size_t kWords = kHeaderWords + 3 * kMaxGpus;
  std::atomic<std::uint32_t> seq_{0};
  std::array<std::atomic<std::int64_t>, kWords> words_{};
};

/// Filter for a pod whose requests are GPUs alone, with no devices released by preemption and no
/// NUMA restriction: nullopt where the answer needs the node's whole state (a refused demand,
/// whose message comes from there).
std::optional<Status> checkGpusFast(const GpuFastView::Snapshot& view,
                                    const DeviceResources& asked);
/// Score likewise (scoreNode's answer for such a pod); nullopt as above.
std::optional<std::int64_t> scoreGpusFast(const GpuFastView::Snapshot& view,
                                          const DeviceResources& asked, const DeviceScorer& scorer);

}  // namespace koord::roles::scheduler::deviceshare
