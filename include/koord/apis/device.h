// The scheduling.koordinator.sh/v1alpha1 Device (one per node, named after it, written by the
// koordlet): the node's GPUs, RDMA NICs and FPGAs with their resources, health and PCIe/NUMA place.
#pragma once

#include <boost/json/fwd.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "koord/kube/error.h"
#include "koord/kube/labels.h"
#include "koord/kube/quantity.h"

namespace koord::apis {

inline constexpr std::string_view kDeviceGroup = "scheduling.koordinator.sh";
inline constexpr std::string_view kDeviceVersion = "v1alpha1";
inline constexpr std::string_view kDeviceResource = "devices";
inline constexpr std::string_view kDeviceKind = "Device";

/// Bounds on what one Device object may hold: a node carries tens of devices, an SR-IOV NIC a few
/// hundred VFs, and the scheduler walks them for every pod it places on the node.
inline constexpr std::size_t kMaxDevicesPerNode = 1024;
inline constexpr std::size_t kMaxDeviceResourceNames = 32;
inline constexpr std::size_t kMaxDeviceLabels = 64;
inline constexpr std::size_t kMaxDeviceVFGroups = 64;
inline constexpr std::size_t kMaxDeviceVFsPerGroup = 4096;

struct DeviceTopology {
  std::int32_t socket_id = 0;
  std::int32_t node_id = 0;  // the NUMA node, unique across sockets
  std::string pcie_id;       // the PCIe switch
  std::string bus_id;        // domain:bus:device.function

  friend bool operator==(const DeviceTopology&, const DeviceTopology&) = default;
};

struct DeviceVirtualFunction {
  std::int32_t minor = 0;
  std::string bus_id;

  friend bool operator==(const DeviceVirtualFunction&, const DeviceVirtualFunction&) = default;
};

struct DeviceVFGroup {
  kube::Labels labels;
  std::vector<DeviceVirtualFunction> vfs;

  friend bool operator==(const DeviceVFGroup&, const DeviceVFGroup&) = default;
};

/// One spec.devices[] item.
struct DeviceInfo {
  std::string type;  // "gpu", "rdma", "fpga" (kDeviceTypeGPU, ...); others are kept as written
  kube::Labels labels;
  std::string uuid;  // "id"
  std::optional<std::int32_t> minor;
  std::optional<std::int32_t> module_id;
  bool health = false;
  /// With the deprecated kubernetes.io/ device names moved to koordinator.sh/, as Koordinator's
  /// informer transformer does.
  kube::ResourceList resources;
  std::optional<DeviceTopology> topology;
  std::vector<DeviceVFGroup> vf_groups;

  friend bool operator==(const DeviceInfo&, const DeviceInfo&) = default;
};

struct Device {
  std::string name;  // the node's name
  std::string uid;
  std::string resource_version;
  kube::Labels labels;
  std::chrono::system_clock::time_point creation_timestamp{};
  bool terminating = false;
  std::vector<DeviceInfo> devices;  // spec.devices, in the object's order
};

/// Projects a Device. Unknown fields (status.allocations among them: the scheduler counts
/// allocations from pods) are ignored and null reads as absent; a member of the wrong type, a bad
/// quantity or a list over its bound above is an error naming it ("spec.devices[2].minor: ...").
kube::Expected<Device> decodeDevice(const boost::json::value& v);

/// Moves the deprecated kubernetes.io/{gpu,gpu-core,gpu-memory,gpu-memory-ratio,rdma,fpga} of
/// `resources` to their koordinator.sh/ names, unless the new name is already there (then the old
/// one stays, as Koordinator leaves it). True when anything moved.
bool replaceDeprecatedDeviceResources(kube::ResourceList& resources);
/// The koordinator.sh/ name of a deprecated device resource name; "" for any other name.
std::string_view deprecatedDeviceResourceReplacement(std::string_view name);

}  // namespace koord::apis
