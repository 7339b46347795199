#include "fake_pci_sysfs.h"

#include <fmt/format.h>

#include <filesystem>

namespace koord::testing {

namespace fs = std::filesystem;

namespace {

std::string linkPath(std::string_view bus_id) {
  return fmt::format("bus/pci/devices/{}", bus_id);
}

}  // namespace

FakePciDevice pciDevice(std::string bus_id, std::string vendor, std::string device,
                        std::string pci_class) {
  FakePciDevice d;
  d.bus_id = std::move(bus_id);
  d.vendor = std::move(vendor) + "\n";
  d.device = std::move(device) + "\n";
  d.pci_class = std::move(pci_class) + "\n";
  return d;
}

FakePciDevice nvidiaGpu(std::string bus_id) {
  return pciDevice(std::move(bus_id), "0x10de", "0x2330", "0x030200");
}
FakePciDevice huaweiNpu(std::string bus_id) {
  return pciDevice(std::move(bus_id), "0x19e5", "0xd801", "0x120000");
}
FakePciDevice kunlunXpu(std::string bus_id) {
  return pciDevice(std::move(bus_id), "0x1d22", "0x3684", "0x120000");
}
FakePciDevice cambriconMlu(std::string bus_id) {
  return pciDevice(std::move(bus_id), "0xcabc", "0x0370", "0x120000");
}
FakePciDevice metaxGpu(std::string bus_id) {
  return pciDevice(std::move(bus_id), "0x9999", "0x4000", "0x038000");
}
FakePciDevice mellanoxRdmaNic(std::string bus_id) {
  FakePciDevice d = pciDevice(std::move(bus_id), "0x15b3", "0x101b", "0x020000");
  d.rdma_devices = {"mlx5_0"};
  return d;
}
FakePciDevice intelSataController(std::string bus_id) {
  return pciDevice(std::move(bus_id), "0x8086", "0xa182", "0x010601");
}

FakePciSysfs::FakePciSysfs() : tree_("koord-fake-sysfs") {
  tree_.mkdirs("bus/pci/devices");
}

void FakePciSysfs::add(const FakePciDevice& d) const {
  std::string dir = fmt::format("devices/{}/{}", d.pcie_root, d.bus_id);
  tree_.write(dir + "/vendor", d.vendor);
  tree_.write(dir + "/device", d.device);
  tree_.write(dir + "/class", d.pci_class);
  if (d.numa_node)
    tree_.write(dir + "/numa_node", *d.numa_node);
  for (const auto& ib : d.rdma_devices)
    tree_.write(fmt::format("{}/infiniband/{}/node_type", dir, ib), "1: CA\n");
  tree_.symlink(linkPath(d.bus_id), fmt::format("../../../{}", dir));
}

void FakePciSysfs::remove(std::string_view bus_id) const {
  fs::path link = tree_.path(linkPath(bus_id));
  fs::path dir = link.parent_path() / fs::read_symlink(link);
  fs::remove_all(dir);
  fs::remove(link);
}

void FakePciSysfs::setAttribute(std::string_view bus_id, std::string_view name,
                                std::string_view content) const {
  tree_.write(fmt::format("{}/{}", linkPath(bus_id), name), content);
}

void FakePciSysfs::addNumaNode(int node, std::string_view cpulist) const {
  tree_.write(fmt::format("devices/system/node/node{}/cpulist", node), cpulist);
}

void FakePciSysfs::addCpu(int cpu, std::string_view package_id) const {
  tree_.write(fmt::format("devices/system/cpu/cpu{}/topology/physical_package_id", cpu),
              package_id);
}

}  // namespace koord::testing
