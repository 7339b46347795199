// One node's devices as DeviceShare counts them: per type and minor what each offers, what pods
// hold (their device-allocated annotations) and what is free, with a per-type summary of the free.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "koord/apis/device_allocation.h"
#include "plugins/deviceshare/device.h"
#include "plugins/deviceshare/device_resources.h"

namespace koord::roles::scheduler::deviceshare {

/// One device with its accounting; what the feasibility check reads comes first, to share a
/// cache line.
struct DeviceState {
  /// max(total - used, 0).
  DeviceResources free;
  std::uint32_t free_vfs = 0;
  NodeDeviceInfo info;
  DeviceResources used;
  /// Pods holding each of info.vfs (same index); a VF is free at zero.
  std::vector<std::uint16_t> vf_holders;
};

/// Per type, over the devices with anything free.
struct DeviceTypeSummary {
  /// Sum of the devices' free amounts.
  DeviceResources free_sum;
  /// Sum of every device's total, with nothing free or unhealthy too (Score's denominator).
  DeviceResources total_sum;
  /// The largest free amount of each resource on any one device.
  DeviceResources max_free;
  /// Devices with anything free.
  std::uint32_t devices_with_free = 0;
  /// NUMA nodes (bit per topology.nodeID) holding a device of this type, healthy or not.
  std::uint64_t numa_nodes = 0;
};

/// Not synchronised: the owner (the plugin's per-node cache) serialises writers against readers.
class NodeDeviceState {
 public:
  /// Replaces the node's devices (the Device object was added or updated). What the pods hold is
  /// kept and counted again against the new devices.
  void setDevices(NodeDevices devices);
  /// The Device object was deleted: every device counts as unhealthy, as in Koordinator, so
  /// nothing more is placed while the pods' holdings stay counted.
  void markAllUnhealthy();
  /// Whether a Device object was ever seen for the node (Koordinator's DeviceShare lets every pod
  /// through on a node without one).
  bool hasDeviceObject() const { return has_device_object_; }

  /// Counts what the pod holds (a bound or assumed pod's device-allocated annotation); the
  /// deprecated kubernetes.io/ resource names are read as their koordinator.sh/ ones. False, and
  /// nothing changed, when the pod is already counted (the first count stays, as in Koordinator:
  /// the pod assumed at Reserve is seen again when bound).
  bool addPod(std::string_view pod_uid, const apis::DeviceAllocations& allocations);
  /// Stops counting the pod; false when it was not counted.
  bool removePod(std::string_view pod_uid);
  /// What the pod holds; nullptr when it is not counted.
  const apis::DeviceAllocations* podAllocations(std::string_view pod_uid) const;

  /// Sorted by minor.
  const std::vector<DeviceState>& devices(DeviceType type) const {
    return devices_[static_cast<std::size_t>(type)];
  }
  const DeviceState* device(DeviceType type, std::int32_t minor) const;
  const DeviceTypeSummary& summary(DeviceType type) const {
    return summaries_[static_cast<std::size_t>(type)];
  }
  /// NUMA nodes holding any device of any type.
  std::uint64_t numaNodes() const { return numa_nodes_; }
  /// The memory of one GPU (every card of a node is the same model): gpu-memory of the first card,
  /// by minor, that offers anything; nullopt when no card does ("no healthy GPU Devices").
  std::optional<std::int64_t> gpuCardMemory() const { return gpu_card_memory_; }

 private:
  DeviceState* findDevice(DeviceType type, std::int32_t minor);
  void apply(const apis::DeviceAllocations& allocations, bool add);
  void refreshSummary(DeviceType type);
  void refreshDerived();

  std::array<std::vector<DeviceState>, kDeviceTypeCount> devices_;
  std::array<DeviceTypeSummary, kDeviceTypeCount> summaries_{};
  std::map<std::string, apis::DeviceAllocations, std::less<>> pods_;
  std::uint64_t numa_nodes_ = 0;
  std::optional<std::int64_t> gpu_card_memory_;
  bool has_device_object_ = false;
};

}  // namespace koord::roles::scheduler::deviceshare
