// DeviceShare's per-node device accounting, shared by the informer threads (Devices, bound pods)
// and the scheduling cycle: one NodeDeviceState per node, each behind its own reader/writer lock.
#pragma once

#include <atomic>
#include <cstdint>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <vector>

#include "framework/node_slot.h"
#include "plugins/deviceshare/gpu_fast_view.h"
#include "plugins/deviceshare/node_device_state.h"

namespace koord::metrics {
class Gauge;
}  // namespace koord::metrics

namespace koord::roles::scheduler::deviceshare {

/// One node's entry. Filter, Score and the NUMA hints read `state` under a shared lock on `mu`;
/// the informer handlers and Reserve/Unreserve write it under an exclusive one.
/// One series of the allocated-devices metric a node has, kept with its child so that Reserve
/// sets it without the family's lookup by label values.
struct PublishedSeries {
  DeviceType type;
  DeviceResource resource;
  std::vector<std::string> labels;
  metrics::Gauge* gauge = nullptr;
};

struct NodeDeviceEntry {
  mutable std::shared_mutex mu;
  NodeDeviceState state;                   // under mu
  std::vector<PublishedSeries> published;  // under mu: the metric series set
  std::string name;                        // set once, when the entry is made
  std::uint32_t slot = kNoNodeSlot;        // likewise
  /// Whether the node has device accounting (see DeviceCache); read without mu.
  std::atomic<bool> present{false};
};

/// Entries by node slot. An entry is present once the node's Device or a bound pod holding
/// devices there was seen (Koordinator's nodeDeviceCache); a node without one has no device
/// accounting, and DeviceShare lets every pod through there. Entries are never freed: a removed
/// node's is emptied and marked absent, so a pointer stays good for whoever holds it.
class DeviceCache {
 public:
  /// Null when the node has no present entry: by slot (NodeInfo::nodeSlot()) in a cycle.
  NodeDeviceEntry* find(std::uint32_t slot) const {
    NodeDeviceEntry* e = entries_.find(slot);
    return e != nullptr && e->present.load(std::memory_order_acquire) ? e : nullptr;
  }
  NodeDeviceEntry* find(std::string_view node) const { return find(nodeSlotOf(node)); }
  /// The node's entry, made present (empty) on first use; null only for a name past the slot
  /// bound (nodeSlotOf logs it).
  NodeDeviceEntry* getOrCreate(std::string_view node);
  /// Marks the node's entry absent (the Node was deleted) and returns it for the caller to
  /// empty under its lock; null when there was none.
  NodeDeviceEntry* remove(std::string_view node);
  /// The nodes with a present entry, sorted.
  std::vector<std::string> nodes() const;

  /// Republishes the entry's GPUs and presence for the cycle's readers: under the entry's
  /// exclusive lock, after every change of its state or presence.
  void publishView(const NodeDeviceEntry& entry);
  /// The node's GPUs as last published, without its lock (by slot, in a cycle).
  GpuFastView::Read readView(std::uint32_t slot, GpuFastView::Snapshot& out,
                             GpuFastView::Part part) const {
    const GpuFastView* view = views_.find(slot);
    return view == nullptr ? GpuFastView::Read::kUnknown : view->read(out, part);
  }

 private:
  NodeSlotTable<NodeDeviceEntry> entries_;
  /// Apart from the entries, so that a cycle's reads of neighbouring nodes share cache lines.
  NodeSlotArray<GpuFastView> views_;
};

}  // namespace koord::roles::scheduler::deviceshare
