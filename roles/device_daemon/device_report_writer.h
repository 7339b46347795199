// Writes the device report so that the koordlet never reads half a file: a temp file in the same
// directory, fsync, rename; the directory is created first (/var/run is a tmpfs).
#pragma once

#include <span>
#include <string>

#include "koord/apis/xpu_device_info.h"
#include "koord/core/result.h"

namespace koord::roles::device_daemon {

/// On failure nothing at `path` changed: the last good report stays for the koordlet.
Result<void> writeDeviceReport(const std::string& path,
                               std::span<const apis::XpuDeviceInfo> devices);

}  // namespace koord::roles::device_daemon
