#include "koord/cgroup/cgroup_version.h"

#include <linux/magic.h>
#include <sys/statfs.h>

#include <cerrno>
#include <cstring>
#include <system_error>

#include <fmt/format.h>

namespace koord::cgroup {

namespace fs = std::filesystem;

std::string_view cgroupVersionName(CgroupVersion v) {
  return v == CgroupVersion::kV2 ? "v2" : "v1";
}

std::string_view cgroupDriverName(CgroupDriver d) {
  return d == CgroupDriver::kSystemd ? "systemd" : "cgroupfs";
}

Expected<CgroupVersion> detectCgroupVersion(const fs::path& root) {
  struct statfs st {};
  if (::statfs(root.c_str(), &st) != 0) {
    return invalidArgument(
        fmt::format("cgroup root {}: statfs: {}", root.string(), std::strerror(errno)));
  }
  if (static_cast<unsigned long>(st.f_type) == CGROUP2_SUPER_MAGIC)
    return CgroupVersion::kV2;
  if (static_cast<unsigned long>(st.f_type) == TMPFS_MAGIC ||
      static_cast<unsigned long>(st.f_type) == CGROUP_SUPER_MAGIC)
    return CgroupVersion::kV1;
  // Not a cgroup mount at all: a tree a test (or an operator's chroot) prepared.
  std::error_code ec;
  return fs::exists(root / "cgroup.controllers", ec) ? CgroupVersion::kV2 : CgroupVersion::kV1;
}

Expected<CgroupDriver> detectCgroupDriver(const fs::path& root, CgroupVersion version) {
  const fs::path base = version == CgroupVersion::kV1 ? root / "cpu" : root;
  std::error_code ec;
  if (fs::is_directory(base / "kubepods.slice", ec))
    return CgroupDriver::kSystemd;
  if (fs::is_directory(base / "kubepods", ec))
    return CgroupDriver::kCgroupfs;
  return invalidArgument(fmt::format(
      "cgroup driver: neither {0}/kubepods.slice nor {0}/kubepods exists (is the kubelet "
      "running? set -cgroup-driver)",
      base.string()));
}

Expected<CgroupDriver> parseCgroupDriver(std::string_view name) {
  if (name == "cgroupfs")
    return CgroupDriver::kCgroupfs;
  if (name == "systemd")
    return CgroupDriver::kSystemd;
  return invalidArgument(fmt::format("cgroup driver {:?}: must be cgroupfs or systemd", name));
}

}  // namespace koord::cgroup
