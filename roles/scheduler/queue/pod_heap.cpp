#include "queue/pod_heap.h"

#include <utility>

namespace koord::roles::scheduler {

void PodHeap::addOrUpdate(QueuedPodInfo info) {
  if (handle_)
    info.sort_handle = handle_(*info.pod);
  std::string key = info.pod->key();
  if (auto it = index_.find(key); it != index_.end()) {
    entries_[it->second].info = std::move(info);
    fix(it->second);
    return;
  }
  auto [it, inserted] = index_.emplace(std::move(key), entries_.size());
  entries_.push_back(Entry{std::move(info), &*it});
  up(entries_.size() - 1);
}

bool PodHeap::erase(const std::string& key) {
  auto it = index_.find(key);
  if (it == index_.end())
    return false;
  removeAt(it->second);
  return true;
}

const QueuedPodInfo* PodHeap::get(const std::string& key) const {
  auto it = index_.find(key);
  return it == index_.end() ? nullptr : &entries_[it->second].info;
}

std::optional<QueuedPodInfo> PodHeap::pop() {
  if (entries_.empty())
    return std::nullopt;
  QueuedPodInfo top = std::move(entries_.front().info);
  removeAt(0);
  return top;
}

void PodHeap::place(std::size_t i, Entry&& e) {
  entries_[i] = std::move(e);
  entries_[i].slot->second = i;
}

void PodHeap::fix(std::size_t i) {
  if (!up(i))
    down(i);
}

std::size_t PodHeap::smallerChild(std::size_t i) const {
  const std::size_t n = entries_.size();
  const std::size_t left = 2 * i + 1;
  if (left >= n)
    return kNoChild;
  return left + 1 < n && lessAt(left + 1, left) ? left + 1 : left;
}

// Entries move through a hole rather than by swaps: each step writes one entry instead of two.
void PodHeap::rise(std::size_t i, Entry&& moving) {
  while (i > 0 && less_(moving.info, entries_[(i - 1) / 2].info)) {
    const std::size_t parent = (i - 1) / 2;
    place(i, std::move(entries_[parent]));
    i = parent;
  }
  place(i, std::move(moving));
}

bool PodHeap::up(std::size_t i) {
  if (i == 0 || !lessAt(i, (i - 1) / 2))
    return false;
  Entry moving = std::move(entries_[i]);
  const std::size_t parent = (i - 1) / 2;
  place(i, std::move(entries_[parent]));
  rise(parent, std::move(moving));
  return true;
}

void PodHeap::down(std::size_t i) {
  Entry moving = std::move(entries_[i]);
  for (std::size_t c = smallerChild(i); c != kNoChild && less_(entries_[c].info, moving.info);
       c = smallerChild(i)) {
    place(i, std::move(entries_[c]));
    i = c;
  }
  place(i, std::move(moving));
}

// The hole left at `i` sinks to a leaf along the smaller children, one comparison a level, and
// the last entry then rises from there (Floyd's method). The last entry nearly always belongs
// near the bottom, so this takes about half the comparisons of sifting it down from `i`; the
// queue's order can be costly to compare (Coscheduling reads its gangs' rounds).
void PodHeap::removeAt(std::size_t i) {
  index_.erase(index_.find(entries_[i].slot->first));
  Entry moving = std::move(entries_.back());
  entries_.pop_back();
  if (i == entries_.size())
    return;
  for (std::size_t c = smallerChild(i); c != kNoChild; c = smallerChild(i)) {
    place(i, std::move(entries_[c]));
    i = c;
  }
  rise(i, std::move(moving));
}

}  // namespace koord::roles::scheduler
