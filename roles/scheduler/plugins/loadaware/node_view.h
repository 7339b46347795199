// What LoadAwareScheduling derives from one node, kept per thread so that Filter and Score read
// it without locks or lookups by name: per Node object, per NodeMetric and pod-assign generation.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "framework/node_info.h"
#include "koord/apis/node_metric.h"
#include "plugins/loadaware/pod_assign_cache.h"
#include "plugins/loadaware/resource_vector.h"
#include "plugins/loadaware/usage_thresholds.h"

namespace koord::roles::scheduler::loadaware {

/// The per-node vectors, each of the vectorizer's size. With the usual two resources the first
/// four, all that a Filter or Score of a non-prod pod without aggregation reads, sit in the
/// view's second cache line; the others (and all of them for more resources) in its cold part.
enum NodeVector : std::size_t {
  /// estimatedOfExisting for a non-prod pod with the node's filter profile, and its limits
  /// (usageLimit of each of the profile's usage thresholds against the allocatable).
  kFilterExisting,
  kUsageLimit,
  /// Estimator::estimateNode (status.allocatable with raw-allocatable applied).
  kAllocatable,
  /// For a non-prod pod with the args' score aggregation.
  kScoreExisting,
  /// For a prod pod, against the prod thresholds.
  kProdExisting,
  kProdLimit,
  /// Limits of the profile's aggregated thresholds (kFilterExisting then is of the aggregation).
  kAggregatedLimit,
  kVectors,
};

/// What a view needs only when it is built or refreshed.
struct NodeViewCold {
  // What keeps the view's keys meaning what they did: a Node and a NodeMetric are immutable and
  // replaced on any change, and holding them keeps their addresses from naming another object.
  std::shared_ptr<const Node> node;
  std::shared_ptr<const apis::NodeMetric> metric;
  std::shared_ptr<const NodePods> pods;
  /// nodeProfile: set only when the node's annotation overrides the args' thresholds.
  std::unique_ptr<UsageThresholdsProfile> custom_profile;
  /// The vectors that do not fit the view's line.
  std::vector<std::int64_t> values;
};

/// Two cache lines (an adjacent pair, which the hardware fetches together): the header, then the
/// common vectors.
struct alignas(128) NodeView {
  static constexpr std::size_t kInlineResources = 2;
  static constexpr std::size_t kInlineVectors = 4;

  const Node* key = nullptr;
  /// The NodeMetric the load is of (null: not built yet), and the pod-assign generation.
  const apis::NodeMetric* metric_key = nullptr;
  std::uint64_t pods_generation = 0;
  /// The node's pod-assign generation, which tells when the load went stale.
  const std::atomic<std::uint64_t>* pods_generation_now = nullptr;
  /// The args' profile, or cold->custom_profile.
  const UsageThresholdsProfile* profile = nullptr;
  /// Of metric_key: metadata.updateTime (when reported) and whether status.nodeMetric is set.
  TimePoint metric_update_time{};
  bool metric_reported = false;
  bool has_node_metric = false;
  /// Whether the profile's usage, prod and aggregated thresholds check anything (not all zero).
  bool checks_usage = false;
  bool checks_prod = false;
  bool checks_aggregated = false;
  std::unique_ptr<NodeViewCold> cold;
  std::array<std::int64_t, kInlineResources * kInlineVectors> inline_values{};

  std::optional<TimePoint> metricUpdateTime() const {
    return metric_reported ? std::optional<TimePoint>(metric_update_time) : std::nullopt;
  }
  /// The vector of `n` entries (n: the vectorizer's size, the same for every call).
  const std::int64_t* vector(NodeVector v, std::size_t n) const {
    if (n > kInlineResources)
      return cold->values.data() + v * n;
    if (v < kInlineVectors)
      return inline_values.data() + v * n;
    return cold->values.data() + (v - kInlineVectors) * n;
  }
  std::int64_t* mutableVector(NodeVector v, std::size_t n) {
    return const_cast<std::int64_t*>(std::as_const(*this).vector(v, n));
  }
};

/// NodeViews by Node address: open addressing over a dense list, no erase (clear() instead).
class NodeViewTable {
 public:
  NodeView* find(const Node* key) {
    // Filter and Score walk the snapshot in order, and reorder() puts views in that order: the
    // next view in the list is usually the one asked for.
    if (next_ < views_.size() && views_[next_].key == key) {
      NodeView* view = &views_[next_++];
      prefetchNext();
      return view;
    }
    return findHashed(key);
  }
  /// A view keyed by (and holding) `node`, which must not be present yet, with room for
  /// vectors of `n` entries. References from find() and insert() last until the next insert.
  NodeView& insert(std::shared_ptr<const Node> node, std::size_t n);
  std::size_t size() const { return views_.size(); }
  /// Views made since the table was last cleared or reordered.
  std::size_t inserted() const { return inserted_; }
  void clear();
  /// Keeps only the views of `order`'s nodes, in that order: the order Filter and Score walk,
  /// which views made as the threads happened to meet nodes have lost. Invalidates references.
  void reorder(const std::vector<const Node*>& order);

 private:
  /// Eight bytes, so that probing stays within a line or two: a tag from the hash's low half
  /// spares most mismatches a look at the view.
  struct Slot {
    std::uint32_t tag = 0;
    std::uint32_t index_plus_one = 0;  // 0: empty
  };
  NodeView* findHashed(const Node* key);
  /// Starts fetching the view the walk will ask for next: a miss costs as much as the rest of
  /// a call, and the hardware does not see the pattern across calls.
  void prefetchNext() const {
    if (next_ < views_.size()) {
      __builtin_prefetch(&views_[next_]);
      __builtin_prefetch(reinterpret_cast<const char*>(&views_[next_]) + 64);
    }
  }
  std::uint64_t hash(const Node* key) const;
  void place(std::uint64_t h, std::size_t index);

  std::vector<Slot> slots_;  // a power of two, at most half full
  int shift_ = 63;
  std::vector<NodeView> views_;
  /// The view after the last one found or made.
  std::size_t next_ = 0;
  std::size_t inserted_ = 0;
};

/// A process-unique owner id for threadNodeViews (one per plugin instance).
std::uint64_t newNodeViewOwner();

namespace detail {
// The calling thread's last table: constant-initialised, so reading them needs no guard.
extern constinit thread_local std::uint64_t t_last_owner;
extern constinit thread_local NodeViewTable* t_last_table;
NodeViewTable& threadNodeViewsSlow(std::uint64_t owner);
}  // namespace detail

/// The calling thread's table for `owner`. A thread keeps tables for a few owners; the least
/// recently used goes when there are more (its owner, if still alive, rebuilds it).
inline NodeViewTable& threadNodeViews(std::uint64_t owner) {
  if (detail::t_last_owner == owner)
    return *detail::t_last_table;
  return detail::threadNodeViewsSlow(owner);
}

}  // namespace koord::roles::scheduler::loadaware
