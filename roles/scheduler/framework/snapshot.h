// The cluster as one scheduling cycle sees it: every node with a Node object, in a stable order,
// plus the lists InterPodAffinity walks. Taken from the cache at the start of each cycle.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "node_images.h"
#include "node_info.h"

namespace koord::roles::scheduler {

class Snapshot {
 public:
  Snapshot() = default;
  /// For tests and the in-process benchmark: a snapshot of these nodes (nodes without a Node
  /// object are dropped), their image names counted.
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

  /// Swaps in a newer NodeInfo for a node already listed, keeping its place in nodes() and the
  /// derived lists, so the cache updates one node without a reindex; false when info is null,
  /// has no Node or names a node not listed.
  bool replace(std::shared_ptr<const NodeInfo> info);

  /// How many of this snapshot's nodes report the image name `id` (ImageLocality's spread).
  /// Lock-free and allocation-free; 0 for a name no node reports.
  std::uint32_t imageNodeCount(ImageNameId id) const {
    return image_counts_ == nullptr ? 0 : image_counts_->count(id);
  }
  /// Whether any node of this snapshot reports an image the cache counted (ImageLocality scores
  /// every node 0 without one).
  bool anyNodeImages() const {
    return image_counts_ != nullptr && image_counts_->countedNames() > 0;
  }
  /// The scheduler cache hands over its counts with the node list they match (updateSnapshot).
  /// replace() leaves them alone: the cache sets them after its replacements, and the other
  /// callers' replacements (a transformer's stand-in NodeInfo) keep the node's Node.
  void setImageNodeCounts(std::shared_ptr<const ImageNodeCounts> counts) {
    image_counts_ = std::move(counts);
  }

  /// The cache generation this snapshot was last brought up to (SchedulerCache::updateSnapshot
  /// copies only NodeInfos newer than this); 0 for a snapshot no cache has filled.
  std::int64_t generation = 0;

 private:
  std::vector<std::shared_ptr<const NodeInfo>> nodes_;
  std::vector<std::shared_ptr<const NodeInfo>> with_affinity_;
  std::vector<std::shared_ptr<const NodeInfo>> with_required_anti_affinity_;
  std::unordered_map<std::string_view, std::size_t> index_;
  std::shared_ptr<const ImageNodeCounts> image_counts_;
};

}  // namespace koord::roles::scheduler
