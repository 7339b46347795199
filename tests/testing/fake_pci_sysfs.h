// A fake sysfs tree of PCI devices for koord-device-daemon's tests: device directories linked
// from bus/pci/devices as the kernel links them, NUMA nodes and CPU packages.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "temp_tree.h"

namespace koord::testing {

/// File contents as the kernel writes them ("0x10de\n"); tests garble them on purpose.
struct FakePciDevice {
  std::string bus_id;
  std::string vendor;
  std::string device;
  std::string pci_class;
  std::optional<std::string> numa_node = "0\n";  // nullopt: no numa_node file
  std::string pcie_root = "pci0000:00";
  std::vector<std::string> rdma_devices;  // names under <dev>/infiniband/ ("mlx5_0")
};

/// Any device; ids and class as the kernel spells them ("0x10de", "0x030200"), newline added.
FakePciDevice pciDevice(std::string bus_id, std::string vendor, std::string device,
                        std::string pci_class);
FakePciDevice nvidiaGpu(std::string bus_id);            // H100 (0x2330), 3D controller
FakePciDevice huaweiNpu(std::string bus_id);            // Ascend (0xd801), processing accelerator
FakePciDevice kunlunXpu(std::string bus_id);            // 0x3684, processing accelerator
FakePciDevice cambriconMlu(std::string bus_id);         // 0x0370, processing accelerator
FakePciDevice metaxGpu(std::string bus_id);             // 0x4000, display controller
FakePciDevice mellanoxRdmaNic(std::string bus_id);      // ConnectX-6 (0x101b) with mlx5_<n>
FakePciDevice intelSataController(std::string bus_id);  // reported by nobody

class FakePciSysfs {
 public:
  FakePciSysfs();

  const std::filesystem::path& root() const { return tree_.root(); }
  const TempTree& tree() const { return tree_; }

  /// devices/<pcie_root>/<bus_id>/{vendor,device,class,numa_node,infiniband/...} and the link
  /// bus/pci/devices/<bus_id> -> ../../../devices/<pcie_root>/<bus_id>.
  void add(const FakePciDevice& device) const;
  /// The device leaves the bus: its link and directory go.
  void remove(std::string_view bus_id) const;
  /// Overwrites one attribute file of a device added before ("vendor", "numa_node").
  void setAttribute(std::string_view bus_id, std::string_view name, std::string_view content) const;
  /// devices/system/node/node<node>/cpulist.
  void addNumaNode(int node, std::string_view cpulist) const;
  /// devices/system/cpu/cpu<cpu>/topology/physical_package_id.
  void addCpu(int cpu, std::string_view package_id) const;

 private:
  TempTree tree_;
};

}  // namespace koord::testing
