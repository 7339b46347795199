#include "pci_vendors.h"

#include <fmt/format.h>

#include "koord/apis/xpu_device_info.h"

namespace koord::roles::device_daemon {

namespace {

// PCI base classes (the class code's top byte).
constexpr uint32_t kClassDisplay = 0x03;      // VGA, 3D and other display controllers
constexpr uint32_t kClassAccelerator = 0x12;  // processing accelerators
// Sub-class 0x0b40, "co-processor", which some accelerators report instead of 0x12.
constexpr uint32_t kSubClassCoProcessor = 0x0b40;

bool isAcceleratorClass(uint32_t class_code) {
  uint32_t base = class_code >> 16;
  return base == kClassDisplay || base == kClassAccelerator ||
         (class_code >> 8) == kSubClassCoProcessor;
}

}  // namespace

std::optional<std::string_view> acceleratorVendor(uint16_t vendor_id, uint32_t class_code) {
  // NVIDIA boards also carry audio, USB and NVSwitch functions; only the GPU is a display
  // controller.
  if (vendor_id == kPciVendorNVIDIA)
    return (class_code >> 16) == kClassDisplay ? std::optional(apis::kVendorNVIDIA) : std::nullopt;
  // The other vendors make NICs, disks and bridges too (Huawei above all): the class tells their
  // accelerators apart.
  if (!isAcceleratorClass(class_code))
    return std::nullopt;
  switch (vendor_id) {
    case kPciVendorHuawei:
      return apis::kVendorHuawei;
    case kPciVendorKunlun:
      return apis::kVendorKunlun;
    case kPciVendorCambricon:
      return apis::kVendorCambricon;
    case kPciVendorMetaX:
      return apis::kVendorMetaX;
    default:
      return std::nullopt;
  }
}

std::string nicVendorName(uint16_t vendor_id) {
  switch (vendor_id) {
    case 0x15b3:
      return "mellanox";
    case 0x8086:
      return "intel";
    case 0x14e4:
      return "broadcom";
    case kPciVendorHuawei:
      return std::string(apis::kVendorHuawei);
    default:
      return fmt::format("{:#06x}", vendor_id);
  }
}

}  // namespace koord::roles::device_daemon
