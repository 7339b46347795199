#include "pci_address.h"

#include <catch2/catch.hpp>

#include "pci_vendors.h"

using namespace koord::roles::device_daemon;

TEST_CASE("PCI addresses: NVML's and the kernel's spellings meet", "[devicedaemon][pci]") {
  CHECK(normalizePciAddress("00000000:3B:00.0") == "0000:3b:00.0");
  CHECK(normalizePciAddress("0000:3b:00.0") == "0000:3b:00.0");
  CHECK(normalizePciAddress("0001:AF:1f.7") == "0001:af:1f.7");
  CHECK(normalizePciAddress("10000:00:02.0") == "10000:00:02.0");  // VMD domains
  for (const char* bad :
       {"", "3b:00.0", "0000:3b:00", "0000:3b:00.8", "0000:3b:20.0", "0000:3b:0.0", "0000:-3:00.0",
        "0x00:3b:00.0", "0000:3b:00.0 ", "000000000:3b:00.0"}) {
    CAPTURE(bad);
    CHECK_FALSE(normalizePciAddress(bad));
  }
}

TEST_CASE("PCI vendors: accelerators by vendor and class, NIC vendors by name",
          "[devicedaemon][pci]") {
  CHECK(acceleratorVendor(0x10de, 0x030000) == "nvidia");  // VGA
  CHECK(acceleratorVendor(0x10de, 0x030200) == "nvidia");  // 3D controller
  CHECK_FALSE(acceleratorVendor(0x10de, 0x068000));        // NVSwitch bridge
  CHECK_FALSE(acceleratorVendor(0x10de, 0x120000));        // NVIDIA: GPUs only
  CHECK(acceleratorVendor(0x19e5, 0x120000) == "huawei");
  CHECK(acceleratorVendor(0x1d22, 0x0b4000) == "kunlun");  // co-processor
  CHECK(acceleratorVendor(0xcabc, 0x120000) == "cambricon");
  CHECK(acceleratorVendor(0x9999, 0x038000) == "metax");
  CHECK_FALSE(acceleratorVendor(0x19e5, 0x010802));  // a Huawei NVMe disk
  CHECK_FALSE(acceleratorVendor(0x1002, 0x030000));  // AMD: not a vendor Koordinator reports
  CHECK(nicVendorName(0x15b3) == "mellanox");
  CHECK(nicVendorName(0x1dd8) == "0x1dd8");
}
