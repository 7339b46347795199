// The scheduler's view of one node: the Node's projection plus the pods on it (bound and
// assumed) and what they add up to. Immutable once published in a snapshot; the cache builds a
// new NodeInfo (copy-on-write) for each change, so a cycle's snapshot never changes under it.
#pragma once

#include <boost/json/fwd.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "koord/kube/error.h"
#include "koord/kube/labels.h"
#include "koord/kube/scheduling_match.h"
#include "node_images.h"
#include "node_slot.h"
#include "pod_info.h"
#include "prefer_avoid_pods.h"
#include "reservation_info.h"
#include "resource.h"

namespace koord::apis {
struct NodeMetric;
}

namespace koord::roles::scheduler {

/// Bounds node.status.images (the kubelet reports 50 by default; -1 lifts its cap).
inline constexpr std::size_t kMaxNodeImages = 4096;
inline constexpr std::size_t kMaxImageNames = 256;

struct Node {
  std::string name;
  std::string uid;
  kube::Labels labels;
  /// Only the annotations a plugin reads (node.koordinator.sh/raw-allocatable,
  /// scheduling.koordinator.sh/usage-thresholds, ...; see node_decode.cpp).
  kube::Labels annotations;
  bool unschedulable = false;
  std::vector<kube::Taint> taints;
  Resource allocatable;
  Resource capacity;
  /// status.images, names interned (ImageLocality).
  NodeImages images;
  /// The preferAvoidPods annotation, parsed (NodePreferAvoidPods); the annotation itself is not
  /// kept.
  std::vector<AvoidedController> avoid_pods;
};

/// Projects a Node; errors name the field ("status.allocatable[cpu]: ...").
kube::Expected<Node> decodeNode(const boost::json::value& v);

/// (hostIP, protocol, port) in use on a node; 0.0.0.0 conflicts with every IP.
class HostPortUsage {
 public:
  void add(const HostPort& p);
  void remove(const HostPort& p);
  bool conflicts(const HostPort& p) const;
  bool empty() const { return ports_.empty(); }

 private:
  std::vector<HostPort> ports_;  // few per node
};

struct NodeInfo {
  /// Null while only pods are known for a node the cache has not seen (a pod bound before its
  /// Node arrived); such a NodeInfo is never in a snapshot's node list.
  std::shared_ptr<const Node> node;
  std::vector<std::shared_ptr<const PodInfo>> pods;
  /// The subset of pods with any (anti-)affinity, and with required anti-affinity, for
  /// InterPodAffinity's walk over existing pods.
  std::vector<std::shared_ptr<const PodInfo>> pods_with_affinity;
  std::vector<std::shared_ptr<const PodInfo>> pods_with_required_anti_affinity;
  /// The node's NodeMetric (the koordlet's usage report) as the cache last saw it; null when
  /// none. Attached here so that plugins read it without a lookup by name on every node.
  std::shared_ptr<const apis::NodeMetric> node_metric;
  /// The Available reservations on this node. Their remaining() room counts in requested (and
  /// non_zero_requested), so no pod sees it as free unless the Reservation plugin gives it back
  /// for one of the reservation's owners.
  std::vector<std::shared_ptr<const ReservationInfo>> reservations;
  Resource requested;
  Resource non_zero_requested;
  HostPortUsage used_ports;
  /// Bumped on every change: the snapshot copies only nodes whose generation moved.
  std::int64_t generation = 0;
  /// nodeSlotOf(name), set by the scheduler cache; kNoNodeSlot in a NodeInfo built elsewhere.
  std::uint32_t slot = kNoNodeSlot;

  const std::string& name() const;
  /// slot, or the name's slot looked up (a NodeInfo built outside the cache).
  std::uint32_t nodeSlot() const { return slot != kNoNodeSlot ? slot : nodeSlotOf(name()); }
  void addPod(std::shared_ptr<const PodInfo> pod);
  /// False when no pod with that UID is on the node.
  bool removePod(const std::string& uid);
  /// Adds (or replaces, by UID) a reservation; the owner pods already on the node count in its
  /// allocated, whichever came first.
  void addReservation(std::shared_ptr<const ReservationInfo> reservation);
  /// False when no reservation with that UID is on the node.
  bool removeReservation(const std::string& uid);
  /// Null when none with that UID is here.
  const ReservationInfo* reservation(std::string_view uid) const;
};

}  // namespace koord::roles::scheduler
