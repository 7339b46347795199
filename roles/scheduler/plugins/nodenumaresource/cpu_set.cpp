// CpuSet: word-wise set algebra, and the kernel list syntax through koord::cgroup.
#include "plugins/nodenumaresource/cpu_set.h"

#include <algorithm>
#include <cassert>

#include "koord/cgroup/cpu_topology.h"

namespace koord::roles::scheduler::nodenumaresource {

CpuSet::CpuSet(std::initializer_list<int> cpus) {
  for (int c : cpus)
    add(c);
}

CpuSet CpuSet::fromIds(std::span<const int> cpus) {
  CpuSet s;
  for (int c : cpus)
    s.add(c);
  return s;
}

Expected<CpuSet> CpuSet::parse(std::string_view list) {
  auto ids = cgroup::parseCpuList(list);
  if (!ids)
    return ids.error();
  return fromIds(*ids);
}

void CpuSet::add(int cpu) {
  assert(cpu >= 0 && cpu <= cgroup::kMaxCpuId);
  const auto w = static_cast<std::size_t>(cpu) / kWordBits;
  if (w >= words_.size())
    words_.resize(w + 1, 0);
  words_[w] |= Word{1} << (cpu % kWordBits);
}

void CpuSet::remove(int cpu) {
  if (cpu < 0)
    return;
  const auto w = static_cast<std::size_t>(cpu) / kWordBits;
  if (w >= words_.size())
    return;
  words_[w] &= ~(Word{1} << (cpu % kWordBits));
  trim();
}

int CpuSet::size() const {
  int n = 0;
  for (Word w : words_)
    n += std::popcount(w);
  return n;
}

bool CpuSet::empty() const {
  return std::all_of(words_.begin(), words_.end(), [](Word w) { return w == 0; });
}

int CpuSet::first() const {
  for (std::size_t w = 0; w < words_.size(); ++w) {
    if (words_[w] != 0)
      return static_cast<int>(w) * kWordBits + std::countr_zero(words_[w]);
  }
  return -1;
}

void CpuSet::unionWith(const CpuSet& other) {
  if (other.words_.size() > words_.size())
    words_.resize(other.words_.size(), 0);
  for (std::size_t w = 0; w < other.words_.size(); ++w)
    words_[w] |= other.words_[w];
}

void CpuSet::intersectWith(const CpuSet& other) {
  if (words_.size() > other.words_.size())
    words_.resize(other.words_.size());
  for (std::size_t w = 0; w < words_.size(); ++w)
    words_[w] &= other.words_[w];
  trim();
}

void CpuSet::subtract(const CpuSet& other) {
  const std::size_t n = std::min(words_.size(), other.words_.size());
  for (std::size_t w = 0; w < n; ++w)
    words_[w] &= ~other.words_[w];
  trim();
}

int CpuSet::intersectionSize(const CpuSet& other) const {
  const std::size_t n = std::min(words_.size(), other.words_.size());
  int count = 0;
  for (std::size_t w = 0; w < n; ++w)
    count += std::popcount(words_[w] & other.words_[w]);
  return count;
}

bool CpuSet::intersects(const CpuSet& other) const {
  const std::size_t n = std::min(words_.size(), other.words_.size());
  for (std::size_t w = 0; w < n; ++w) {
    if ((words_[w] & other.words_[w]) != 0)
      return true;
  }
  return false;
}

bool CpuSet::isSubsetOf(const CpuSet& other) const {
  for (std::size_t w = 0; w < words_.size(); ++w) {
    const Word theirs = w < other.words_.size() ? other.words_[w] : 0;
    if ((words_[w] & ~theirs) != 0)
      return false;
  }
  return true;
}

bool operator==(const CpuSet& a, const CpuSet& b) {
  const std::size_t n = std::max(a.words_.size(), b.words_.size());
  for (std::size_t w = 0; w < n; ++w) {
    const CpuSet::Word x = w < a.words_.size() ? a.words_[w] : 0;
    const CpuSet::Word y = w < b.words_.size() ? b.words_[w] : 0;
    if (x != y)
      return false;
  }
  return true;
}

std::vector<int> CpuSet::toVector() const {
  std::vector<int> out;
  out.reserve(static_cast<std::size_t>(size()));
  forEach([&](int c) { out.push_back(c); });
  return out;
}

std::string CpuSet::toString() const {
  const std::vector<int> ids = toVector();
  return cgroup::formatCpuList(ids);
}

void CpuSet::trim() {
  while (!words_.empty() && words_.back() == 0)
    words_.pop_back();
}

}  // namespace koord::roles::scheduler::nodenumaresource
