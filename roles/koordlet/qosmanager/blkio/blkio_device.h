// Which disk a blkioQOS block names, as the "MAJ:MIN" the cgroup files take: a device path by
// stat(2) under the dev root, a pod's CSI volume by the file system mounted in its kubelet
// directory; a partition, or a device-mapper volume over one device, mapped to its whole disk
// through sysfs (the kernel throttles and weighs whole disks).
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "koord/kube/error.h"

namespace koord::roles::koordlet::qosmanager {

struct BlkIORoots {
  std::filesystem::path dev_root = "/dev";
  /// -sys-root-dir.
  std::filesystem::path sys_root = "/sys";
  /// -var-lib-kubelet-dir.
  std::filesystem::path kubelet_root = "/var/lib/kubelet";
};

/// "/dev/<path>" (symlinks such as /dev/disk/by-id/... followed): the block device's number, its
/// whole disk's for a partition. Errors name the block: not under /dev/, a "." or ".."
/// component, absent, not a block device.
kube::Expected<std::string> resolveDeviceBlock(const BlkIORoots& roots, std::string_view name);

/// The disk of the file system mounted at <kubelet_root>/pods/<uid>/volumes/kubernetes.io~csi/
/// <volume>/mount: where a CSI inline volume of that name is. A PVC's volume is mounted under
/// its PV's name, which needs the PVC's binding: the error says so when the directory is absent.
/// Errors too for a directory with nothing mounted on it, or a file system on no block device.
kube::Expected<std::string> resolvePodVolumeBlock(const BlkIORoots& roots, std::string_view pod_uid,
                                                  std::string_view volume);

/// The whole disk under block device major:minor per <sys_root>/dev/block: a device-mapper or md
/// device with exactly one slave is followed to it, a partition to its disk; the number itself
/// when sysfs does not say more.
std::string wholeDiskOf(const std::filesystem::path& sys_root, unsigned major, unsigned minor);

}  // namespace koord::roles::koordlet::qosmanager
