// A dense number per node name, fixed for the process's lifetime, and a table indexed by it:
// per-node plugin state found from a NodeInfo without hashing and comparing its name.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string_view>
#include <vector>

namespace koord::roles::scheduler {

/// No slot: a NodeInfo built outside the scheduler cache (a test's), or a name past the bound.
inline constexpr std::uint32_t kNoNodeSlot = UINT32_MAX;
/// Node names ever numbered in one process. Slots are never reused (a deleted node's name keeps
/// its number for when it comes back), so the bound is on distinct names; past it, nodeSlotOf
/// answers kNoNodeSlot and the plugins count such nodes as unknown (logged once).
inline constexpr std::uint32_t kMaxNodeSlots = 1u << 22;

/// The name's slot, numbered on first sight; thread-safe. Called where names arrive (the
/// cache's first NodeInfo for a node, a plugin informer's event), not in a cycle.
std::uint32_t nodeSlotOf(std::string_view name);

/// T per slot stored inline, in chunks of consecutive slots: for the small words a cycle reads on
/// every node (a summary, a flag), so that neighbouring nodes share cache lines rather than each
/// costing a miss on its own heap object. T is default-constructible and brings its own
/// synchronisation (atomics); a chunk, once made, is never moved or freed before the array.
template <typename T>
class NodeSlotArray {
 public:
  NodeSlotArray() = default;
  NodeSlotArray(const NodeSlotArray&) = delete;
  NodeSlotArray& operator=(const NodeSlotArray&) = delete;
  ~NodeSlotArray() {
    for (auto& chunk : chunks_)
      delete chunk.load(std::memory_order_relaxed);
  }

  /// Null when the slot's chunk was never made (or kNoNodeSlot).
  T* find(std::uint32_t slot) const noexcept {
    if (slot >= kMaxNodeSlots)
      return nullptr;
    Chunk* c = chunks_[slot >> kChunkBits].load(std::memory_order_acquire);
    return c == nullptr ? nullptr : &c->values[slot & kChunkMask];
  }

  /// The slot's T, its chunk made on first use; null only for kNoNodeSlot.
  T* getOrCreate(std::uint32_t slot) {
    if (T* t = find(slot); t != nullptr || slot >= kMaxNodeSlots)
      return t;
    std::lock_guard lock(mu_);
    auto& chunk = chunks_[slot >> kChunkBits];
    Chunk* c = chunk.load(std::memory_order_relaxed);
    if (c == nullptr) {
      c = new Chunk();
      chunk.store(c, std::memory_order_release);
    }
    return &c->values[slot & kChunkMask];
  }

 private:
  static constexpr unsigned kChunkBits = 10;
  static constexpr std::uint32_t kChunkMask = (1u << kChunkBits) - 1;
  struct Chunk {
    std::array<T, (1u << kChunkBits)> values{};
  };

  std::mutex mu_;
  std::array<std::atomic<Chunk*>, (kMaxNodeSlots >> kChunkBits)> chunks_{};
};

/// T per slot, created on first use and kept until the table goes: lookups take no lock and
/// never move, so a reader may hold a T& while writers add other slots. T brings its own lock.
template <typename T>
class NodeSlotTable {
 public:
  NodeSlotTable() = default;
  NodeSlotTable(const NodeSlotTable&) = delete;
  NodeSlotTable& operator=(const NodeSlotTable&) = delete;
  ~NodeSlotTable() {
    for (std::uint32_t slot : made_)
      delete find(slot);
  }

  /// Null when the slot has no T yet (or is kNoNodeSlot).
  T* find(std::uint32_t slot) const noexcept {
    const std::atomic<T*>* entry = slots_.find(slot);
    return entry == nullptr ? nullptr : entry->load(std::memory_order_acquire);
  }

  /// The slot's T, made on first use; null only for kNoNodeSlot.
  T* getOrCreate(std::uint32_t slot) {
    if (T* t = find(slot); t != nullptr || slot >= kMaxNodeSlots)
      return t;
    std::atomic<T*>* entry = slots_.getOrCreate(slot);
    std::lock_guard lock(mu_);
    T* t = entry->load(std::memory_order_relaxed);
    if (t == nullptr) {
      t = new T();
      entry->store(t, std::memory_order_release);
      made_.push_back(slot);
    }
    return t;
  }

  /// fn(slot, T&) for every T made so far, in the order they were made.
  template <typename Fn>
  void forEach(Fn&& fn) const {
    std::vector<std::uint32_t> slots;
    {
      std::lock_guard lock(mu_);
      slots = made_;
    }
    for (std::uint32_t slot : slots)
      fn(slot, *find(slot));
  }

 private:
  mutable std::mutex mu_;
  std::vector<std::uint32_t> made_;  // under mu_
  NodeSlotArray<std::atomic<T*>> slots_;
};

}  // namespace koord::roles::scheduler
