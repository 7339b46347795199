// A binary heap of queued pods that can also find, replace and remove a pod by its key
// (namespace/name): the activeQ and the podBackoffQ are both one of these, ordered differently.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "framework/plugin.h"

namespace koord::roles::scheduler {

/// Not thread-safe: the SchedulingQueue's mutex guards it.
class PodHeap {
 public:
  using Less = std::function<bool(const QueuedPodInfo&, const QueuedPodInfo&)>;
  using Handle = std::function<std::shared_ptr<const void>(const PodInfo&)>;

  /// `handle`, when given, sets each entry's sort_handle as it is added or replaced.
  explicit PodHeap(Less less, Handle handle = {})
      : less_(std::move(less)), handle_(std::move(handle)) {}

  /// Inserts, or replaces the entry with the same key and restores its place (client-go's
  /// heap Add and Update are the same operation). `info.pod` must not be null.
  void addOrUpdate(QueuedPodInfo info);
  /// False when no entry has `key`.
  bool erase(const std::string& key);
  /// Null when absent; valid until the heap is next modified.
  const QueuedPodInfo* get(const std::string& key) const;
  bool contains(const std::string& key) const { return index_.contains(key); }
  /// The smallest entry by `less`; null when empty.
  const QueuedPodInfo* peek() const { return entries_.empty() ? nullptr : &entries_.front().info; }
  std::optional<QueuedPodInfo> pop();

  std::size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }
  /// Every entry, in heap (not sorted) order.
  template <typename Fn>
  void forEach(Fn&& fn) const {
    for (const auto& e : entries_)
      fn(e.info);
  }

 private:
  using Index = std::unordered_map<std::string, std::size_t>;
  /// `slot` is the entry's own record in index_ (map nodes do not move), so a move within the
  /// heap updates its position without hashing the key again.
  struct Entry {
    QueuedPodInfo info;
    Index::value_type* slot = nullptr;
  };

  bool lessAt(std::size_t a, std::size_t b) const {
    return less_(entries_[a].info, entries_[b].info);
  }
  /// Stores `e` at `i` and records the position.
  void place(std::size_t i, Entry&& e);
  static constexpr std::size_t kNoChild = static_cast<std::size_t>(-1);
  /// The smaller of `i`'s children; kNoChild at a leaf.
  std::size_t smallerChild(std::size_t i) const;
  /// Fills the hole at `i` with `moving`, or a hole above it, moving down the parents it beats.
  void rise(std::size_t i, Entry&& moving);
  /// Moves entry `i` up or down until the heap property holds again.
  void fix(std::size_t i);
  bool up(std::size_t i);
  void down(std::size_t i);
  void removeAt(std::size_t i);

  Less less_;
  Handle handle_;
  std::vector<Entry> entries_;
  Index index_;  // key -> position in entries_
};

}  // namespace koord::roles::scheduler
