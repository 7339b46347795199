// Which PCI devices koord-device-daemon reports and under what vendor name: accelerators of the
// vendors Koordinator knows, by PCI vendor id and class, and the vendors of RDMA NICs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace koord::roles::device_daemon {

inline constexpr uint16_t kPciVendorNVIDIA = 0x10de;
inline constexpr uint16_t kPciVendorHuawei = 0x19e5;
inline constexpr uint16_t kPciVendorKunlun = 0x1d22;
inline constexpr uint16_t kPciVendorCambricon = 0xcabc;
inline constexpr uint16_t kPciVendorMetaX = 0x9999;

/// The report's vendor name ("nvidia", "huawei", "kunlun", "cambricon", "metax") when the device
/// is an accelerator koord reports; nullopt otherwise. `class_code` is the 24-bit class from
/// sysfs (0x030200: a 3D controller).
std::optional<std::string_view> acceleratorVendor(uint16_t vendor_id, uint32_t class_code);

/// The vendor name of an RDMA NIC ("mellanox", "intel", ...), or its id as "0x15b3" when koord
/// has no name for it.
std::string nicVendorName(uint16_t vendor_id);

}  // namespace koord::roles::device_daemon
