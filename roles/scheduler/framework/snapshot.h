// The cluster as one scheduling cycle sees it: every node with a Node object, in a stable order,
// plus the lists InterPodAffinity walks. Taken from the cache at the start of each cycle.
#pragma once

#include <memory>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "node_info.h"

namespace koord::roles::scheduler {

class Snapshot {
 public:
  Snapshot() = default;
  /// For tests and the in-process benchmark: a snapshot of these nodes (nodes without a Node
  /// object are dropped).
  explicit Snapshot(std::vector<std::shared_ptr<const NodeInfo>> nodes);

  const std::vector<std::shared_ptr<const NodeInfo>>& nodes() const { return nodes_; }
  const std::vector<std::shared_ptr<const NodeInfo>>& nodesWithPodAffinity() const {
    return with_affinity_;
  }
  const std::vector<std::shared_ptr<const NodeInfo>>& nodesWithRequiredAntiAffinity() const {
    return with_required_anti_affinity_;
  }
  /// Null for an unknown node.
  const NodeInfo* get(std::string_view name) const;
  std::size_t size() const { return nodes_.size(); }

  /// Rebuilds the derived lists and the index after the cache replaced entries of nodes().
  void reindex();
  std::vector<std::shared_ptr<const NodeInfo>>& mutableNodes() { return nodes_; }

 private:
  std::vector<std::shared_ptr<const NodeInfo>> nodes_;
  std::vector<std::shared_ptr<const NodeInfo>> with_affinity_;
  std::vector<std::shared_ptr<const NodeInfo>> with_required_anti_affinity_;
  std::unordered_map<std::string_view, std::size_t> index_;
};

}  // namespace koord::roles::scheduler
