// Koordinator's device report (XPUDeviceInfo in pkg/koordlet/util/device.go): the JSON array that
// koord-device-daemon writes and the koordlet reads to build the node's Device object.
#pragma once

#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "koord/kube/error.h"

namespace koord::apis {

/// Device resource names (apis/extension/device_share.go).
inline constexpr std::string_view kResourceGPUCore = "koordinator.sh/gpu-core";
inline constexpr std::string_view kResourceGPUMemory = "koordinator.sh/gpu-memory";
inline constexpr std::string_view kResourceGPUMemoryRatio = "koordinator.sh/gpu-memory-ratio";
inline constexpr std::string_view kResourceRDMA = "koordinator.sh/rdma";
inline constexpr std::string_view kResourceNvidiaGPU = "nvidia.com/gpu";
inline constexpr std::string_view kResourceHygonDCU = "dcu.com/gpu";
inline constexpr std::string_view kResourceGPU = "koordinator.sh/gpu";
inline constexpr std::string_view kResourceGPUShared = "koordinator.sh/gpu.shared";
inline constexpr std::string_view kResourceFPGA = "koordinator.sh/fpga";
/// Huawei Ascend NPUs, scheduled as GPUs (Koordinator v1.8): AI cores, AI CPUs and the media
/// (DVPP) share of one NPU; a vNPU slice takes amounts one of the shared-resource templates lists.
inline constexpr std::string_view kResourceHuaweiNPUCore = "huawei.com/npu-core";
inline constexpr std::string_view kResourceHuaweiNPUCPU = "huawei.com/npu-cpu";
inline constexpr std::string_view kResourceHuaweiNPUDVPP = "huawei.com/npu-dvpp";

/// The GPU labels of the node's Device object, which the manager copies onto the Node
/// (apis/extension/device_share.go).
inline constexpr std::string_view kLabelGPUVendor = "node.koordinator.sh/gpu-vendor";
inline constexpr std::string_view kLabelGPUModel = "node.koordinator.sh/gpu-model";
inline constexpr std::string_view kLabelGPUDriverVersion = "node.koordinator.sh/gpu-driver-version";

/// Vendor names as Koordinator writes them (extension.GPUVendor* and the device-daemon's own).
inline constexpr std::string_view kVendorNVIDIA = "nvidia";
inline constexpr std::string_view kVendorHuawei = "huawei";
inline constexpr std::string_view kVendorKunlun = "kunlun";
inline constexpr std::string_view kVendorCambricon = "cambricon";
inline constexpr std::string_view kVendorMetaX = "metax";

struct XpuP2PLink {
  std::string peer_minor;
  std::string type;  // "NVLink", "HCCS"

  friend bool operator==(const XpuP2PLink&, const XpuP2PLink&) = default;
};

/// Koordinator writes the ids as strings, "-1" where unknown; they stay strings here so that a
/// report reads back exactly as it was written.
struct XpuDeviceTopology {
  std::vector<XpuP2PLink> p2p_links;
  bool must_honor_partition = false;
  std::string socket_id;
  std::string node_id;
  std::string pcie_id;  // the PCIe root complex, "pci0000:3a"
  std::string bus_id;   // "0000:3b:00.0"

  friend bool operator==(const XpuDeviceTopology&, const XpuDeviceTopology&) = default;
};

struct XpuDeviceStatus {
  bool healthy = false;
  std::string err_code;
  std::string err_message;

  friend bool operator==(const XpuDeviceStatus&, const XpuDeviceStatus&) = default;
};

struct XpuDeviceInfo {
  std::string vendor;
  std::string model;
  std::string uuid;
  std::string minor;
  std::map<std::string, std::string> resources;  // sorted, as Go marshals a map
  std::optional<XpuDeviceTopology> topology;
  std::optional<XpuDeviceStatus> status;

  friend bool operator==(const XpuDeviceInfo&, const XpuDeviceInfo&) = default;
};

/// The report as Go's encoding/json writes it: the same field names, order and omitempty rules,
/// one line ending in a newline. An empty report is "[]".
std::string formatXpuDeviceInfos(std::span<const XpuDeviceInfo> devices);

/// Reads a report written by either device-daemon (Koordinator's or ours). Absent and null members
/// read as empty, as Go decodes them; an error names the first member of the wrong type
/// ("[1].topology.busID: expected string, got number").
kube::Expected<std::vector<XpuDeviceInfo>> parseXpuDeviceInfos(std::string_view json);

}  // namespace koord::apis
