// PCI addresses ("domain:bus:device.function") in the one spelling the report uses, so a GPU
// that NVML names "00000000:3B:00.0" matches the sysfs directory 0000:3b:00.0.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace koord::roles::device_daemon {

/// The kernel's spelling: lower-case hex, the domain at least four digits ("0000:3b:00.0").
/// nullopt for anything that is not an address (domain 1-8 hex digits, bus and device two,
/// function one, 0-7).
std::optional<std::string> normalizePciAddress(std::string_view address);

}  // namespace koord::roles::device_daemon
