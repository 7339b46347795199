// A node's Device object as DeviceShare reads it: the devices of the types it schedules, by type
// and minor, with their resources (none when unhealthy), NUMA place and SR-IOV virtual functions.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "koord/apis/device.h"
#include "plugins/deviceshare/device_resources.h"

namespace koord::roles::scheduler::deviceshare {

/// The key a DeviceShare plugin would declare its Device informer under.
inline constexpr std::string_view kDeviceSource = "devices.scheduling.koordinator.sh";

/// A virtual function of an RDMA NIC; the NIC's VF groups flattened, sorted by bus id (the order
/// Koordinator hands them out in).
struct DeviceVF {
  std::int32_t minor = 0;
  std::string bus_id;
  /// The VF group it came from (an index into NodeDeviceInfo::vf_group_labels).
  std::uint32_t group = 0;

  friend bool operator==(const DeviceVF&, const DeviceVF&) = default;
};

/// One device of a node.
struct NodeDeviceInfo {
  std::int32_t minor = 0;
  bool healthy = false;
  /// What the device offers; all zero when unhealthy, as Koordinator counts an unhealthy device.
  DeviceResources total;
  /// The NUMA node (topology.nodeID), -1 without a topology; socket and PCIe switch likewise.
  std::int32_t numa_node = -1;
  std::int32_t socket = -1;
  std::string pcie_id;
  std::string bus_id;
  /// The device's labels, for a device-allocate-hint's selector.
  kube::Labels labels;
  std::vector<DeviceVF> vfs;
  /// Each VF group's labels, for a device-allocate-hint's vfSelector.
  std::vector<kube::Labels> vf_group_labels;

  friend bool operator==(const NodeDeviceInfo&, const NodeDeviceInfo&) = default;
};

/// The devices of one node by type, each list sorted by minor.
struct NodeDevices {
  std::array<std::vector<NodeDeviceInfo>, kDeviceTypeCount> by_type;
  /// What was left out and why ("spec.devices[3]: no minor"), for the caller to log once.
  std::vector<std::string> skipped;

  const std::vector<NodeDeviceInfo>& of(DeviceType type) const {
    return by_type[static_cast<std::size_t>(type)];
  }
};

/// The highest NUMA node id a device may name and still take part in NUMA alignment (hints and
/// NUMA-restricted allocation use 64-bit masks); a device beyond it counts as having no topology.
inline constexpr std::int32_t kMaxDeviceNumaNode = 63;

/// Reads the Device's spec.devices. Left out, each noted in `skipped`: a type DeviceShare does not
/// schedule, a device without a minor (Koordinator's scheduler cannot address it either), and the
/// earlier of two devices of one type with the same minor (the later one wins, as in
/// Koordinator's per-minor map).
NodeDevices readNodeDevices(const apis::Device& device);

}  // namespace koord::roles::scheduler::deviceshare
