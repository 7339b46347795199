// kube-scheduler's nodeTree: node names grouped by zone, listed round-robin across zones so that
// a cycle that stops after enough feasible nodes still sees every zone. Not thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "framework/node_info.h"

namespace koord::roles::scheduler {

/// utilnode.GetZoneKey: "<region>:\x00:<zone>" from the topology.kubernetes.io labels, falling
/// back to the failure-domain.beta ones; empty when the node has neither.
std::string zoneKey(const Node& node);

class NodeTree {
 public:
  /// Adds name under zone, or moves it there when it sits in another zone; false when it is
  /// already in that zone (nothing changed).
  bool add(const std::string& name, const std::string& zone);
  /// False when name is not in the tree.
  bool remove(const std::string& name);
  std::size_t numNodes() const { return zone_of_.size(); }
  /// Zones in the order they first appeared, each zone's nodes in insertion order, taken one
  /// per zone per round. Rebuilt only after add/remove changed something.
  const std::vector<std::string>& list() const;

 private:
  std::vector<std::string> zones_;
  std::unordered_map<std::string, std::vector<std::string>> tree_;
  std::unordered_map<std::string, std::string> zone_of_;
  mutable std::vector<std::string> list_;
  mutable bool list_stale_ = false;
};

}  // namespace koord::roles::scheduler
