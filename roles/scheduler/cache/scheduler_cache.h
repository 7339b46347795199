// kube-scheduler's internal cache of nodes, bound and assumed pods, as copy-on-write NodeInfos
// from which each cycle's Snapshot is brought up to date, copying only what changed.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "cache/node_tree.h"
#include "framework/node_images.h"
#include "framework/node_info.h"
#include "framework/pod_info.h"
#include "framework/snapshot.h"
#include "koord/kube/error.h"

namespace koord::roles::scheduler {

/// kube-scheduler v1.20 creates its cache with a 30 s TTL for assumed pods whose binding
/// finished (the 15 min of later releases came with 1.23).
inline constexpr std::chrono::seconds kDefaultAssumedPodTTL{30};

/// What dump() shows: each NodeInfo's pod keys (namespace/name) by node name, nodes without a
/// Node object included, and the keys of the assumed pods, sorted.
struct CacheDump {
  struct NodeEntry {
    bool has_node = false;
    std::int64_t generation = 0;
    std::vector<std::string> pods;
  };
  std::map<std::string, NodeEntry> nodes;
  std::vector<std::string> assumed;
};

/// For the scheduler_cache_size metric: NodeInfos (those without a Node included), pods known
/// (bound and assumed), and assumed pods.
struct CacheCounts {
  std::size_t nodes = 0;
  std::size_t pods = 0;
  std::size_t assumed = 0;
};

class SchedulerCache {
 public:
  using Clock = std::chrono::steady_clock;

  explicit SchedulerCache(Clock::duration ttl = kDefaultAssumedPodTTL) : ttl_(ttl) {}

  // Nodes. A removed node whose pods are still known keeps a NodeInfo without a Node until its
  // last pod goes; snapshots never list it.
  kube::Expected<void> addNode(std::shared_ptr<const Node> node);
  /// The cache's copy is the old node (an unknown node is added).
  kube::Expected<void> updateNode(std::shared_ptr<const Node> node);
  kube::Expected<void> removeNode(const std::string& name);

  // Objects kept on a node's NodeInfo (plugin-declared kinds with a node slot): `attach` is
  // kept by kind and node name and applied to that node's NodeInfo whenever one exists;
  // `detach` clears it. `kind` names the kind in errors ("nodeMetric").
  kube::Expected<void> setNodeObject(const std::string& kind, const std::string& node_name,
                                     std::function<void(NodeInfo&)> attach);
  kube::Expected<void> removeNodeObject(const std::string& kind, const std::string& node_name,
                                        const std::function<void(NodeInfo&)>& detach);
  /// setNodeObject for NodeInfo::node_metric.
  kube::Expected<void> setNodeMetric(const std::string& node_name,
                                     std::shared_ptr<const apis::NodeMetric> metric);
  kube::Expected<void> removeNodeMetric(const std::string& node_name);

  // Pods, by UID; pod->node_name says which node.
  /// The scheduling thread's decision, before binding: the pod counts on its node at once.
  kube::Expected<void> assumePod(std::shared_ptr<const PodInfo> pod);
  /// Binding is done: the assumed pod expires at now + ttl unless the informer confirms it
  /// first. False (not an error) when the pod is no longer assumed: the informer's add may
  /// beat the binder's return.
  bool finishBinding(const PodInfo& pod, Clock::time_point now);
  /// Drops an assumed pod (binding failed).
  kube::Expected<void> forgetPod(const PodInfo& pod);
  /// The informer saw a bound pod: confirms an assumed one (moving it when it landed elsewhere)
  /// or adds it.
  kube::Expected<void> addPod(std::shared_ptr<const PodInfo> pod);
  kube::Expected<void> updatePod(const PodInfo& old_pod, std::shared_ptr<const PodInfo> new_pod);
  kube::Expected<void> removePod(const PodInfo& pod);
  // Reservations. An Available reservation keeps its room on its node; adding one confirms the
  // assumed reserve pod of the same UID (its binding was the status write), as addPod confirms
  // an assumed pod. Re-adding a UID replaces it, on whichever node it now names.
  kube::Expected<void> addReservation(std::shared_ptr<const ReservationInfo> reservation);
  /// Drops the reservation (and an assumed reserve pod of that UID); not an error when absent.
  void removeReservation(const std::string& uid);
  /// How many reservations hold room now.
  std::size_t reservationCount() const;

  /// Expires assumed pods whose binding finished before now - ttl; returns how many went, or
  /// the pods that could not be removed (the others are expired regardless).
  kube::Expected<std::size_t> cleanupAssumedPods(Clock::time_point now);
  bool isAssumedPod(const std::string& uid) const;
  kube::Expected<std::shared_ptr<const PodInfo>> getPod(const std::string& uid) const;

  /// The current NodeInfo for a name (null when none), for callers that need one node now.
  std::shared_ptr<const NodeInfo> nodeInfo(const std::string& name) const;

  /// Brings snapshot up to date: rebuilds its node list in the node tree's order after nodes
  /// came, went or changed zone; otherwise swaps in only the NodeInfos newer than
  /// snapshot.generation. It gets the image name counts of the same nodes.
  void updateSnapshot(Snapshot& snapshot) const;

  CacheDump dump() const;
  CacheCounts counts() const;

 private:
  struct PodState {
    std::shared_ptr<const PodInfo> pod;
    bool binding_finished = false;
    std::optional<Clock::time_point> deadline;
  };

  /// A writable copy of name's NodeInfo, or a fresh one carrying its node objects.
  std::shared_ptr<NodeInfo> copyOf(const std::string& name) const;
  /// Publishes info for name under the next generation.
  void publish(const std::string& name, std::shared_ptr<NodeInfo> info);
  /// Drops name's NodeInfo (no Node, no pods left); counts as a node-list change.
  void erase(const std::string& name);
  void addPodLocked(std::shared_ptr<const PodInfo> pod);
  kube::Expected<void> removePodLocked(const PodInfo& pod);
  void removeReservationLocked(const std::string& uid);
  /// Publishes info, or erases it when it has no Node, no pods and no reservations left.
  void publishOrErase(const std::string& name, std::shared_ptr<NodeInfo> info);
  kube::Expected<void> setNodeLocked(std::shared_ptr<const Node> node);
  /// Moves the image counts from a node's old Node to its new one (either may be null).
  void countImages(const Node* before, const Node* after);

  const Clock::duration ttl_;
  mutable std::mutex mu_;
  std::unordered_map<std::string, std::shared_ptr<const NodeInfo>> nodes_;
  /// Each NodeInfo's name by its generation, newest last: updateSnapshot walks only the tail.
  std::map<std::int64_t, std::string> by_generation_;
  /// Node objects' attach functions by node name, then kind.
  std::unordered_map<std::string, std::map<std::string, std::function<void(NodeInfo&)>>>
      node_objects_;
  std::unordered_map<std::string, PodState> pods_;
  std::unordered_set<std::string> assumed_;
  /// Each Available reservation's node, by UID.
  std::unordered_map<std::string, std::string> reservations_;
  NodeTree tree_;
  std::int64_t generation_ = 0;
  /// The generation at which the tree's node list last changed: a snapshot older than this
  /// gets its node list rebuilt.
  std::int64_t tree_generation_ = 0;
  /// How many Nodes report each image name (ImageLocality's spread), kept as Nodes come, change
  /// and go, so that no cycle walks the nodes for it; updateSnapshot hands out an immutable
  /// copy, made again only after a change (null until then).
  mutable ImageNodeCounts image_counts_;
  mutable std::shared_ptr<const ImageNodeCounts> published_image_counts_;
};

}  // namespace koord::roles::scheduler
