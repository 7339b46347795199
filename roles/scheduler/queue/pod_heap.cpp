#include "queue/pod_heap.h"

#include <utility>

namespace koord::roles::scheduler {

void PodHeap::addOrUpdate(QueuedPodInfo info) {
  std::string key = info.pod->key();
  if (auto it = index_.find(key); it != index_.end()) {
    entries_[it->second].info = std::move(info);
    fix(it->second);
    return;
  }
  entries_.push_back(Entry{key, std::move(info)});
  index_.emplace(std::move(key), entries_.size() - 1);
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

void PodHeap::swapAt(std::size_t a, std::size_t b) {
  std::swap(entries_[a], entries_[b]);
  index_[entries_[a].key] = a;
  index_[entries_[b].key] = b;
}

void PodHeap::fix(std::size_t i) {
  if (!up(i))
    down(i);
}

bool PodHeap::up(std::size_t i) {
  const std::size_t start = i;
  while (i > 0) {
    const std::size_t parent = (i - 1) / 2;
    if (!lessAt(i, parent))
      break;
    swapAt(i, parent);
    i = parent;
  }
  return i != start;
}

void PodHeap::down(std::size_t i) {
  const std::size_t n = entries_.size();
  for (;;) {
    std::size_t smallest = i;
    const std::size_t left = 2 * i + 1;
    const std::size_t right = left + 1;
    if (left < n && lessAt(left, smallest))
      smallest = left;
    if (right < n && lessAt(right, smallest))
      smallest = right;
    if (smallest == i)
      return;
    swapAt(i, smallest);
    i = smallest;
  }
}

void PodHeap::removeAt(std::size_t i) {
  const std::size_t last = entries_.size() - 1;
  if (i != last)
    swapAt(i, last);
  index_.erase(entries_.back().key);
  entries_.pop_back();
  if (i < entries_.size())
    fix(i);
}

}  // namespace koord::roles::scheduler
