#include "sysfs_pci_scanner.h"

#include <catch2/catch.hpp>

#include "catch_expected.h"
#include "fake_pci_sysfs.h"
#include "log_lines.h"

using namespace koord::roles::device_daemon;
using koord::testing::FakePciDevice;
using koord::testing::FakePciSysfs;
using koord::testing::LogLines;

namespace {

std::vector<std::string> busIds(const std::vector<PciDevice>& devices) {
  std::vector<std::string> out;
  for (const auto& d : devices)
    out.push_back(d.bus_id);
  return out;
}

}  // namespace

TEST_CASE("sysfs scan: an accelerator of each known vendor, with its ids and place",
          "[devicedaemon][sysfs]") {
  struct Case {
    FakePciDevice device;
    std::string vendor;
    uint16_t device_id;
  };
  const std::vector<Case> cases{
      {koord::testing::nvidiaGpu("0000:3b:00.0"), "nvidia", 0x2330},
      {koord::testing::huaweiNpu("0000:3b:00.0"), "huawei", 0xd801},
      {koord::testing::kunlunXpu("0000:3b:00.0"), "kunlun", 0x3684},
      {koord::testing::cambriconMlu("0000:3b:00.0"), "cambricon", 0x0370},
      {koord::testing::metaxGpu("0000:3b:00.0"), "metax", 0x4000},
  };
  for (Case c : cases) {
    DYNAMIC_SECTION(c.vendor) {
      FakePciSysfs sys;
      c.device.numa_node = "1\n";
      c.device.pcie_root = "pci0000:3a";
      sys.add(c.device);
      sys.addNumaNode(1, "4-7\n");
      sys.addCpu(4, "1\n");

      LogLines log;
      auto devices = scanPciDevices(sys.root());
      REQUIRE(devices);
      REQUIRE(devices->size() == 1);
      const PciDevice& d = devices->front();
      CHECK(d.kind == PciDeviceKind::kAccelerator);
      CHECK(d.vendor == c.vendor);
      CHECK(d.device_id == c.device_id);
      CHECK(d.bus_id == "0000:3b:00.0");
      CHECK(d.numa_node == 1);
      CHECK(d.socket_id == 1);  // node 1's first CPU, cpu4, is in package 1
      CHECK(d.pcie_root == "pci0000:3a");
      CHECK(log.problems() == 0);
    }
  }
}

TEST_CASE("sysfs scan: a mixed node keeps the GPU, the NPU and the RDMA NIC, in bus order",
          "[devicedaemon][sysfs]") {
  FakePciSysfs sys;
  sys.add(koord::testing::mellanoxRdmaNic("0000:5e:00.0"));
  sys.add(koord::testing::intelSataController("0000:00:17.0"));
  sys.add(koord::testing::huaweiNpu("0000:c1:00.0"));
  sys.add(koord::testing::nvidiaGpu("0000:3b:00.0"));
  // Functions that share a vendor with a reported device and are still not reported: the GPU's
  // audio function, a Huawei NIC without RDMA, a Mellanox NIC whose RDMA driver is not loaded.
  sys.add(koord::testing::pciDevice("0000:3b:00.1", "0x10de", "0x22a3", "0x040300"));
  sys.add(koord::testing::pciDevice("0000:d8:00.0", "0x19e5", "0x1822", "0x020000"));
  sys.add(koord::testing::pciDevice("0000:d9:00.0", "0x15b3", "0x101b", "0x020000"));

  LogLines log;
  auto devices = scanPciDevices(sys.root());
  REQUIRE(devices);
  CHECK(busIds(*devices) ==
        std::vector<std::string>{"0000:3b:00.0", "0000:5e:00.0", "0000:c1:00.0"});
  CHECK((*devices)[0].vendor == "nvidia");
  CHECK((*devices)[1].kind == PciDeviceKind::kRdmaNic);
  CHECK((*devices)[1].vendor == "mellanox");
  CHECK((*devices)[1].device_id == 0x101b);
  CHECK((*devices)[2].vendor == "huawei");
  CHECK(log.problems() == 0);
}

TEST_CASE("sysfs scan: a Huawei NIC with RDMA is an RDMA NIC, not an NPU",
          "[devicedaemon][sysfs]") {
  FakePciSysfs sys;
  auto roce = koord::testing::pciDevice("0000:d8:00.0", "0x19e5", "0x1822", "0x020000");
  roce.rdma_devices = {"hrn0_0"};
  sys.add(roce);
  auto devices = scanPciDevices(sys.root());
  REQUIRE(devices);
  REQUIRE(devices->size() == 1);
  CHECK((*devices)[0].kind == PciDeviceKind::kRdmaNic);
  CHECK((*devices)[0].vendor == "huawei");
}

TEST_CASE("sysfs scan: a truncated or garbled file skips that device with one warning naming it",
          "[devicedaemon][sysfs]") {
  auto [attribute, content] = GENERATE(table<std::string, std::string>({
      {"vendor", "0x10"},            // cut off mid-write
      {"vendor", ""},                // empty
      {"class", "0x0302\n"},         // too short to be a class
      {"device", "0xzz30\n"},        // not hex
      {"numa_node", "one\n"},        // not a number
      {"numa_node", "-7\n"},         // out of range
      {"vendor", "0x10de\x01\x02"},  // binary junk after the id
  }));
  CAPTURE(attribute, content);
  FakePciSysfs sys;
  sys.add(koord::testing::nvidiaGpu("0000:3b:00.0"));
  sys.add(koord::testing::nvidiaGpu("0000:86:00.0"));
  sys.add(koord::testing::mellanoxRdmaNic("0000:5e:00.0"));
  sys.setAttribute("0000:86:00.0", attribute, content);

  LogLines log;
  auto devices = scanPciDevices(sys.root());
  REQUIRE(devices);
  CHECK(busIds(*devices) == std::vector<std::string>{"0000:3b:00.0", "0000:5e:00.0"});
  REQUIRE(log.problems() == 1);
  CHECK(log.count("skipping PCI device 0000:86:00.0") == 1);
  CHECK(log.count("0000:86:00.0/" + attribute) == 1);
}

TEST_CASE("sysfs scan: NUMA node -1 or no numa_node file is unknown, and so is the socket",
          "[devicedaemon][sysfs]") {
  FakePciSysfs sys;
  auto minus_one = koord::testing::nvidiaGpu("0000:3b:00.0");
  minus_one.numa_node = "-1\n";
  auto no_file = koord::testing::huaweiNpu("0000:86:00.0");
  no_file.numa_node = std::nullopt;
  sys.add(minus_one);
  sys.add(no_file);

  LogLines log;
  auto devices = scanPciDevices(sys.root());
  REQUIRE(devices);
  REQUIRE(devices->size() == 2);
  for (const auto& d : *devices) {
    CHECK(d.numa_node == -1);
    CHECK(d.socket_id == -1);
  }
  CHECK(log.problems() == 0);
}

TEST_CASE("sysfs scan: a socket that cannot be known is -1; a garbled cpulist warns once",
          "[devicedaemon][sysfs]") {
  FakePciSysfs sys;
  auto on_node = [](std::string bus, std::string node) {
    auto d = koord::testing::nvidiaGpu(std::move(bus));
    d.numa_node = std::move(node);
    return d;
  };
  sys.add(on_node("0000:1b:00.0", "0\n"));  // node 0: garbled cpulist
  sys.add(on_node("0000:1c:00.0", "0\n"));
  sys.add(on_node("0000:3b:00.0", "1\n"));  // node 1: memory only, no CPUs
  sys.add(on_node("0000:5b:00.0", "2\n"));  // node 2: no node directory at all
  sys.add(on_node("0000:7b:00.0", "3\n"));  // node 3: CPUs, package id garbled
  sys.addNumaNode(0, "0-3,x\n");
  sys.addNumaNode(1, "\n");
  sys.addNumaNode(3, "8-9\n");
  sys.addCpu(8, "zero\n");

  LogLines log;
  auto devices = scanPciDevices(sys.root());
  REQUIRE(devices);
  REQUIRE(devices->size() == 5);  // the device itself is fine: it stays
  for (const auto& d : *devices)
    CHECK(d.socket_id == -1);
  CHECK(log.count("node0/cpulist") == 1);
  CHECK(log.count("cpu8/topology/physical_package_id") == 1);
  CHECK(log.problems() == 2);
}

TEST_CASE("sysfs scan: a device directory that is not a link has no PCIe root",
          "[devicedaemon][sysfs]") {
  FakePciSysfs sys;
  sys.tree().write("bus/pci/devices/0000:3b:00.0/vendor", "0x10de\n");
  sys.tree().write("bus/pci/devices/0000:3b:00.0/device", "0x2330\n");
  sys.tree().write("bus/pci/devices/0000:3b:00.0/class", "0x030200\n");
  auto devices = scanPciDevices(sys.root());
  REQUIRE(devices);
  REQUIRE(devices->size() == 1);
  CHECK((*devices)[0].pcie_root.empty());
  CHECK((*devices)[0].numa_node == -1);
}

TEST_CASE("sysfs scan: a root without bus/pci/devices is an error, not an empty node",
          "[devicedaemon][sysfs]") {
  koord::testing::TempTree empty("koord-no-sysfs");
  auto devices = scanPciDevices(empty.root());
  REQUIRE_FALSE(devices);
  CHECK_THAT(devices.error().message, Catch::Contains(empty.path("bus/pci/devices").string()));

  FakePciSysfs sys;  // the directory exists and is empty: a node without PCI devices
  auto none = scanPciDevices(sys.root());
  REQUIRE(none);
  CHECK(none->empty());
}
