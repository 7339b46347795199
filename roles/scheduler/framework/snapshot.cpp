#include "snapshot.h"

#include <algorithm>
#include <utility>

namespace koord::roles::scheduler {

Snapshot::Snapshot(std::vector<std::shared_ptr<const NodeInfo>> nodes) : nodes_(std::move(nodes)) {
  reindex();
  ImageNodeCounts counts;
  for (const auto& n : nodes_)
    counts.add(n->node->images, +1);
  image_counts_ = counts.publish();
}

const NodeInfo* Snapshot::get(std::string_view name) const {
  auto it = index_.find(name);
  return it == index_.end() ? nullptr : nodes_[it->second].get();
}

void Snapshot::reindex() {
  std::erase_if(nodes_, [](const auto& n) { return n == nullptr || n->node == nullptr; });
  index_.clear();
  index_.reserve(nodes_.size());
  with_affinity_.clear();
  with_required_anti_affinity_.clear();
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    const auto& n = nodes_[i];
    index_.emplace(n->name(), i);
    if (!n->pods_with_affinity.empty())
      with_affinity_.push_back(n);
    if (!n->pods_with_required_anti_affinity.empty())
      with_required_anti_affinity_.push_back(n);
  }
}

namespace {

// A node joins or leaves a derived list only when its first or last such pod comes or goes, so
// only then is the list rebuilt (in nodes() order); otherwise the entry is swapped in place.
template <typename Has>
void refreshDerived(std::vector<std::shared_ptr<const NodeInfo>>& list,
                    const std::vector<std::shared_ptr<const NodeInfo>>& nodes,
                    const std::shared_ptr<const NodeInfo>& before,
                    const std::shared_ptr<const NodeInfo>& after, Has has) {
  const bool had = has(*before);
  const bool have = has(*after);
  if (had && have) {
    std::replace(list.begin(), list.end(), before, after);
  } else if (had != have) {
    list.clear();
    for (const auto& n : nodes)
      if (has(*n))
        list.push_back(n);
  }
}

}  // namespace

bool Snapshot::replace(std::shared_ptr<const NodeInfo> info) {
  if (info == nullptr || info->node == nullptr)
    return false;
  auto it = index_.find(info->name());
  if (it == index_.end())
    return false;
  const std::size_t pos = it->second;
  // The key views the old NodeInfo's name, which may die with it: re-key on the new one.
  index_.erase(it);
  const auto before = std::exchange(nodes_[pos], info);
  index_.emplace(nodes_[pos]->name(), pos);
  refreshDerived(with_affinity_, nodes_, before, info,
                 [](const NodeInfo& n) { return !n.pods_with_affinity.empty(); });
  refreshDerived(with_required_anti_affinity_, nodes_, before, info,
                 [](const NodeInfo& n) { return !n.pods_with_required_anti_affinity.empty(); });
  return true;
}

}  // namespace koord::roles::scheduler
