// The text of the kernel's per-device block I/O files ("MAJ:MIN <setting>" a line) and the
// setting BlkIOReconcile wants in each of them for one device, on cgroup v1 and v2.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "koord/cgroup/cgroup_resource.h"
#include "koord/cgroup/cgroup_version.h"
#include "koord/kube/error.h"
#include "qosmanager/blkio/blkio_policy.h"

namespace koord::roles::koordlet::qosmanager {

/// A device file naming more devices than this is refused as malformed.
inline constexpr std::size_t kMaxDeviceLines = 4096;

/// Each device's line without its number, keyed by "MAJ:MIN". Lines of other keys ("default
/// 100" in a weight file) are left out; a device line without a setting is an error.
kube::Expected<std::map<std::string, std::string>> parseDeviceLines(std::string_view text);

/// What one device should hold in one file.
struct DeviceSetting {
  /// What follows "MAJ:MIN " in the write.
  std::string value;
  /// Writing it removes the device's line, so an absent line holds it already.
  bool clears = false;
  friend bool operator==(const DeviceSetting&, const DeviceSetting&) = default;
};

/// Whether a device's current line (nullopt: absent) already holds `want`. Each key=value of
/// `want` must be in the line with an equal value, numbers compared as numbers (the kernel
/// prints percentages as "95.00"), or, for a setting that clears, be left out of it; a bare
/// value compares with the line's first.
bool deviceSettingHeld(const std::optional<std::string>& current, const DeviceSetting& want);

/// The setting of a pod's or tier's file (the throttles and the weight) for a configured
/// device, or, `io` null, for a device to reset: no throttle, weight 100 (Koordinator's reset).
/// On v2 a throttle is its io.max key ("rbps=N", "max" for none).
DeviceSetting cgroupDeviceSetting(cgroup::Resource r, cgroup::CgroupVersion v,
                                  const BlkIOConfig* io);

/// The root's blk-iocost settings: cost.qos ("enable=1 ctrl=user rpct=.. rlat=.. wpct=..
/// wlat=..", or "enable=0" to reset) and cost.model ("ctrl=user rbps=.. rseqiops=..
/// rrandiops=.. wbps=.. wseqiops=.. wrandiops=.." or "ctrl=auto"; never reset, as in
/// Koordinator).
DeviceSetting costQosSetting(const BlkIOConfig* io);
DeviceSetting costModelSetting(const BlkIOConfig& io);

}  // namespace koord::roles::koordlet::qosmanager
