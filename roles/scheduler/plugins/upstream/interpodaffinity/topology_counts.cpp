#include "plugins/upstream/interpodaffinity/topology_counts.h"

#include <algorithm>
#include <iterator>

namespace koord::roles::scheduler::upstream::interpodaffinity {

const TopologyCounts::KeyCounts* TopologyCounts::find(const std::string& key) const {
  for (const auto& k : keys_) {
    if (k.key == key)
      return &k;
  }
  return nullptr;
}

void TopologyCounts::add(const std::string& key, const std::string& value, std::int64_t delta) {
  auto it = std::find_if(keys_.begin(), keys_.end(), [&](const auto& k) { return k.key == key; });
  if (it == keys_.end()) {
    if (delta == 0)
      return;
    keys_.push_back(KeyCounts{key, {}});
    it = std::prev(keys_.end());
  }
  auto [slot, inserted] = it->values.try_emplace(value, 0);
  slot->second += delta;
  if (slot->second != 0)
    return;
  it->values.erase(slot);
  if (it->values.empty())
    keys_.erase(it);
}

std::int64_t TopologyCounts::get(const std::string& key, const std::string& value) const {
  const KeyCounts* k = find(key);
  if (k == nullptr)
    return 0;
  auto it = k->values.find(value);
  return it == k->values.end() ? 0 : it->second;
}

bool TopologyCounts::anyPositiveOn(const kube::Labels& labels) const {
  for (const auto& k : keys_) {
    auto label = labels.find(k.key);
    if (label == labels.end())
      continue;
    auto it = k.values.find(label->second);
    if (it != k.values.end() && it->second > 0)
      return true;
  }
  return false;
}

std::int64_t TopologyCounts::sumOn(const kube::Labels& labels) const {
  std::int64_t sum = 0;
  for (const auto& k : keys_) {
    auto label = labels.find(k.key);
    if (label == labels.end())
      continue;
    auto it = k.values.find(label->second);
    if (it != k.values.end())
      sum += it->second;
  }
  return sum;
}

std::vector<std::tuple<std::string, std::string, std::int64_t>> TopologyCounts::entries() const {
  std::vector<std::tuple<std::string, std::string, std::int64_t>> out;
  for (const auto& k : keys_) {
    for (const auto& [value, count] : k.values)
      out.emplace_back(k.key, value, count);
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace koord::roles::scheduler::upstream::interpodaffinity
