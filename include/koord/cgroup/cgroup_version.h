// Which cgroup hierarchy a root holds (v1: one mount per subsystem; v2: one unified tree) and
// which driver names the kubepods directories (cgroupfs paths or systemd slices).
#pragma once

#include <filesystem>
#include <string_view>

#include "koord/core/expected.h"

namespace koord::cgroup {

enum class CgroupVersion { kV1, kV2 };
enum class CgroupDriver { kCgroupfs, kSystemd };

std::string_view cgroupVersionName(CgroupVersion v);
std::string_view cgroupDriverName(CgroupDriver d);

/// statfs(2) on `root`: cgroup2fs is v2, a tmpfs or cgroup mount is v1. A root on any other
/// filesystem (a test's temp tree) is v2 when it holds cgroup.controllers, v1 otherwise.
Expected<CgroupVersion> detectCgroupVersion(const std::filesystem::path& root);

/// The driver the kubelet used, from the kubepods directory it made: kubepods.slice (systemd)
/// or kubepods (cgroupfs), under the cpu subsystem for v1. An error when neither exists yet.
Expected<CgroupDriver> detectCgroupDriver(const std::filesystem::path& root, CgroupVersion version);

/// "cgroupfs" or "systemd"; anything else is an error naming the value.
Expected<CgroupDriver> parseCgroupDriver(std::string_view name);

}  // namespace koord::cgroup
