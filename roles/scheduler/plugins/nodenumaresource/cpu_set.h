// A set of logical CPU ids as a bitset: the scheduler intersects and subtracts these for every
// node of every pod, so a node of up to 256 CPUs keeps its bits inline, without the heap.
#pragma once

#include <boost/container/small_vector.hpp>

#include <bit>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "koord/core/expected.h"

namespace koord::roles::scheduler::nodenumaresource {

class CpuSet {
 public:
  using Word = std::uint64_t;
  static constexpr int kWordBits = 64;

  CpuSet() = default;
  /// Ids must lie in [0, cgroup::kMaxCpuId]; the constructors and add() are for ids already
  /// checked (a topology's, a parsed list's).
  CpuSet(std::initializer_list<int> cpus);
  static CpuSet fromIds(std::span<const int> cpus);
  /// The kernel list syntax ("0-3,8"), as cgroup::parseCpuList reads it (bounded, errors say
  /// what is wrong).
  static Expected<CpuSet> parse(std::string_view list);

  void add(int cpu);
  void remove(int cpu);
  bool contains(int cpu) const {
    const auto w = static_cast<std::size_t>(cpu) / kWordBits;
    return cpu >= 0 && w < words_.size() && ((words_[w] >> (cpu % kWordBits)) & 1U) != 0;
  }
  void clear() { words_.clear(); }

  /// The number of CPUs.
  int size() const;
  bool empty() const;
  /// The lowest id; -1 when empty.
  int first() const;

  void unionWith(const CpuSet& other);
  void intersectWith(const CpuSet& other);
  void subtract(const CpuSet& other);
  /// |this ∩ other| without building it.
  int intersectionSize(const CpuSet& other) const;
  bool intersects(const CpuSet& other) const;
  bool isSubsetOf(const CpuSet& other) const;

  friend CpuSet operator|(CpuSet a, const CpuSet& b) {
    a.unionWith(b);
    return a;
  }
  friend CpuSet operator&(CpuSet a, const CpuSet& b) {
    a.intersectWith(b);
    return a;
  }
  /// Difference.
  friend CpuSet operator-(CpuSet a, const CpuSet& b) {
    a.subtract(b);
    return a;
  }
  /// Same CPUs (trailing empty words play no part).
  friend bool operator==(const CpuSet& a, const CpuSet& b);

  /// Ascending ids.
  std::vector<int> toVector() const;
  /// The kernel's spelling: "0-3,8"; "" when empty.
  std::string toString() const;

  /// Calls fn(id) for every id, ascending.
  template <typename Fn>
  void forEach(Fn&& fn) const {
    for (std::size_t w = 0; w < words_.size(); ++w) {
      Word bits = words_[w];
      while (bits != 0) {
        const int bit = std::countr_zero(bits);
        fn(static_cast<int>(w) * kWordBits + bit);
        bits &= bits - 1;
      }
    }
  }

 private:
  void trim();

  boost::container::small_vector<Word, 4> words_;
};

}  // namespace koord::roles::scheduler::nodenumaresource
