// The node's Device object (scheduling.koordinator.sh/v1alpha1) as the koordlet reports it: built
// from the device-daemon's XPUDeviceInfo reports, and turned into the JSON that creates or patches
// it.
#pragma once

#include <boost/json/fwd.hpp>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "koord/apis/xpu_device_info.h"
#include "koord/kube/error.h"
#include "koord/kube/labels.h"
#include "koord/kube/quantity.h"

namespace koord::roles::koordlet {

/// Device types as Koordinator names them (schedulingv1alpha1.DeviceType); every accelerator of
/// the report is a "gpu", whatever its vendor calls it.
inline constexpr std::string_view kDeviceTypeGPU = "gpu";
inline constexpr std::string_view kDeviceTypeRDMA = "rdma";

struct DeviceTopologySpec {
  std::int32_t socket_id = -1;
  std::int32_t node_id = -1;
  std::string pcie_id;
  std::string bus_id;

  friend bool operator==(const DeviceTopologySpec&, const DeviceTopologySpec&) = default;
};

/// One entry of spec.devices.
struct DeviceSpecEntry {
  std::string type;
  std::string id;
  std::int32_t minor = 0;
  bool health = true;
  kube::ResourceList resources;
  std::optional<DeviceTopologySpec> topology;

  friend bool operator==(const DeviceSpecEntry&, const DeviceSpecEntry&) = default;
};

struct NodeDevices {
  /// Sorted by type, then minor, then id: the order Koordinator's koordlet writes.
  std::vector<DeviceSpecEntry> devices;
  /// The GPU labels (vendor, model; NVIDIA's driver version) of the first accelerator in the
  /// report; empty without one.
  kube::Labels labels;
  /// What was left out and why (a model that is no label value), for the reporter to log.
  std::vector<std::string> skipped;

  friend bool operator==(const NodeDevices&, const NodeDevices&) = default;
};

struct NodeDeviceOptions {
  /// RDMA NICs are reported only under the RDMADevices gate, as Koordinator does.
  bool rdma = false;
  /// NVIDIA's driver version file (<proc-root>/driver/nvidia/version), read for the
  /// gpu-driver-version label when the first accelerator is NVIDIA's; empty: not read.
  std::filesystem::path nvidia_driver_version_file;
};

/// The driver version ("580.159.04") from the text of /proc/driver/nvidia/version, whose first
/// line names it after "Kernel Module" (proprietary and open modules alike); nullopt when that
/// line is missing or names no version.
std::optional<std::string> parseNvidiaDriverVersion(std::string_view text);

/// The report's devices as spec.devices. Any member that does not convert (a minor, NUMA node or
/// socket that is no int32, a quantity that does not parse) fails the whole report, naming the
/// device: a Device object built from half a report would take devices away from the scheduler.
kube::Expected<NodeDevices> buildNodeDevices(std::span<const apis::XpuDeviceInfo> infos,
                                             const NodeDeviceOptions& options);

/// Every report file in `dir` (regular files in name order; dot files and the device-daemon's
/// "*.tmp.*" files, which are writes in progress, are not read), converted together. A missing
/// directory is a node without devices (no daemon has written yet); a file that cannot be read,
/// parsed or converted is an error naming the file.
kube::Expected<NodeDevices> loadNodeDevices(const std::filesystem::path& dir,
                                            const NodeDeviceOptions& options);

/// spec.devices as the apiserver stores it.
boost::json::array deviceSpecJson(const NodeDevices& devices);

/// The whole Device object, for a create: named after the node and owned by it, so that deleting
/// the Node deletes its Device.
boost::json::object deviceObject(const NodeDevices& devices, std::string_view node_name,
                                 std::string_view node_uid);

/// A merge patch that makes an existing Device match: spec.devices replaced as a whole (so a
/// device that left is gone) and each GPU label set, or removed where `devices` has none.
boost::json::object devicePatch(const NodeDevices& devices);

/// A merge patch of the Node's GPU labels, or nullopt when `node_labels` already carry them.
/// Labels are only set, never removed, as Koordinator's manager copies them onto the Node.
std::optional<boost::json::object> nodeLabelsPatch(const NodeDevices& devices,
                                                   const kube::Labels& node_labels);

}  // namespace koord::roles::koordlet
