// The PCI devices in sysfs that koord-device-daemon reports (accelerators of the vendors
// Koordinator knows, RDMA-capable NICs) and where each sits: NUMA node, socket, PCIe root complex.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "koord/kube/error.h"

namespace koord::roles::device_daemon {

enum class PciDeviceKind { kAccelerator, kRdmaNic };

struct PciDevice {
  std::string bus_id;  // the sysfs directory name, "0000:3b:00.0"
  uint16_t vendor_id = 0;
  uint16_t device_id = 0;
  uint32_t class_code = 0;
  PciDeviceKind kind = PciDeviceKind::kAccelerator;
  std::string vendor;     // the report's vendor name
  int numa_node = -1;     // -1: unknown (no NUMA, or the firmware does not say)
  int socket_id = -1;     // -1: unknown
  std::string pcie_root;  // "pci0000:3a"; empty when the device entry is not a link into it
};

/// The reported devices, sorted by bus ID. A device whose vendor, device, class or numa_node file
/// cannot be read or parsed (truncated, garbled) is left out with one warning naming the file;
/// a missing numa_node means unknown. The socket comes from the NUMA node's first CPU
/// (node/nodeN/cpulist, then cpu/cpuK/topology/physical_package_id); unreadable, it is unknown,
/// with one warning per node for a garbled file. An error only when the device directory itself
/// cannot be listed: a wrong --sysfs-root must not look like a node without devices.
kube::Expected<std::vector<PciDevice>> scanPciDevices(const std::filesystem::path& sysfs_root);

}  // namespace koord::roles::device_daemon
