// Matching-pod counts per topology value (a zone, a hostname) for one spread constraint: an
// open-addressing table in one allocation, so 5,000 hostname domains cost no per-entry malloc.
#pragma once

#include <cstddef>
#include <functional>
#include <string_view>
#include <utility>
#include <vector>

namespace koord::roles::scheduler::upstream::podtopologyspread {

/// Keys are views: they point into the labels of the snapshot's Nodes, which outlive the
/// scheduling cycle that reads this table (kube-scheduler's map keys share the label strings
/// the same way).
template <typename Count>
class DomainCounts {
 public:
  DomainCounts() = default;

  /// Room for `n` values without regrowing.
  void reserve(std::size_t n) {
    std::size_t capacity = kMinCapacity;
    while (capacity < 2 * n)
      capacity *= 2;
    if (capacity > slots_.size())
      rehash(capacity);
  }

  /// Adds `value` with a count of 0 when absent; true when it was added.
  bool insert(std::string_view value) {
    if (2 * (size_ + 1) > slots_.size())
      rehash(slots_.empty() ? kMinCapacity : 2 * slots_.size());
    Slot& s = slots_[probe(value)];
    if (s.used)
      return false;
    s = Slot{value, Count{}, true};
    ++size_;
    return true;
  }

  Count* find(std::string_view value) { return lookup(value).second; }

  /// The table's own key for `value` (a view of the label it was inserted from) and its count;
  /// {"", nullptr} when absent.
  std::pair<std::string_view, Count*> lookup(std::string_view value) {
    if (slots_.empty())
      return {};
    Slot& s = slots_[probe(value)];
    if (!s.used)
      return {};
    return {s.key, &s.count};
  }
  const Count* find(std::string_view value) const {
    return const_cast<DomainCounts*>(this)->find(value);
  }

  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

  /// f(value, count) for every entry, in table order.
  template <typename F>
  void forEach(F&& f) const {
    for (const Slot& s : slots_) {
      if (s.used)
        f(s.key, s.count);
    }
  }

 private:
  static constexpr std::size_t kMinCapacity = 8;

  struct Slot {
    std::string_view key;
    Count count{};
    bool used = false;
  };

  // The slot holding `value`, or the empty slot where it belongs. The table is never full
  // (load stays at most 1/2), so the walk ends.
  std::size_t probe(std::string_view value) const {
    const std::size_t mask = slots_.size() - 1;
    std::size_t i = std::hash<std::string_view>{}(value);
    i &= mask;
    while (slots_[i].used && slots_[i].key != value)
      i = (i + 1) & mask;
    return i;
  }

  void rehash(std::size_t capacity) {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(capacity, Slot{});
    for (const Slot& s : old) {
      if (s.used)
        slots_[probe(s.key)] = s;
    }
  }

  std::vector<Slot> slots_;
  std::size_t size_ = 0;
};

}  // namespace koord::roles::scheduler::upstream::podtopologyspread
