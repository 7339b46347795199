// DeviceShare's per-node device accounting, shared by the informer threads (Devices, bound pods)
// and the scheduling cycle: one NodeDeviceState per node, each behind its own reader/writer lock.
#pragma once

#include <functional>
#include <memory>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <vector>

#include "koord/core/string_map.h"
#include "plugins/deviceshare/node_device_state.h"

namespace koord::roles::scheduler::deviceshare {

/// One node's entry. Filter, Score and the NUMA hints read `state` under a shared lock on `mu`;
/// the informer handlers and Reserve/Unreserve write it under an exclusive one.
struct NodeDeviceEntry {
  mutable std::shared_mutex mu;
  NodeDeviceState state;                            // under mu
  std::vector<std::vector<std::string>> published;  // under mu: the metric series set
};

/// Entries by node name. An entry exists once the node's Device or a bound pod holding devices
/// there was seen (Koordinator's nodeDeviceCache); a node without one has no device accounting,
/// and DeviceShare lets every pod through there.
class DeviceCache {
 public:
  /// Null when the node has no entry. The entry stays valid after remove() for whoever holds it.
  std::shared_ptr<NodeDeviceEntry> find(std::string_view node) const;
  /// The node's entry, created empty on first use.
  std::shared_ptr<NodeDeviceEntry> getOrCreate(std::string_view node);
  /// Drops the node's entry (the Node was deleted); returns it, null when there was none.
  std::shared_ptr<NodeDeviceEntry> remove(std::string_view node);
  /// The nodes with an entry, sorted.
  std::vector<std::string> nodes() const;

 private:
  mutable std::shared_mutex mu_;
  StringMap<std::shared_ptr<NodeDeviceEntry>> nodes_;  // under mu_
};

}  // namespace koord::roles::scheduler::deviceshare
