#include "snapshot.h"

#include <algorithm>

namespace koord::roles::scheduler {

Snapshot::Snapshot(std::vector<std::shared_ptr<const NodeInfo>> nodes) : nodes_(std::move(nodes)) {
  reindex();
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

}  // namespace koord::roles::scheduler
