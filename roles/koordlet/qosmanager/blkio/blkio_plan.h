// One BlkIOReconcile round's targets, as Koordinator picks them: the besteffort tier cgroup for
// beClass, the root for cgroupRoot's blk-iocost settings, and each running pod with a
// koordinator.sh/qosClass label and a koordinator.sh/blkioQOS annotation; each with the disks
// its blocks resolve to.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "koord/cgroup/cgroup_version.h"
#include "koord/kube/error.h"
#include "qosmanager/blkio/blkio_device.h"
#include "qosmanager/blkio/blkio_policy.h"
#include "statesinformer/pod_meta.h"

namespace koord::roles::koordlet::qosmanager {

struct BlkIODevice {
  /// "MAJ:MIN".
  std::string device;
  BlkIOConfig io;
};

struct BlkIOTarget {
  /// For messages: "beClass", "cgroupRoot", "pod <ns>/<name>".
  std::string owner;
  /// cgroupRoot: blk-iocost's qos and model files of the root cgroup, not a cgroup's throttles.
  bool root = false;
  /// The cgroup directory, relative to the root; empty for the root.
  std::string dir;
  /// In the blocks' order; when two blocks resolve to one disk the later one's settings hold.
  /// A device the target's files name that is not here is reset.
  std::vector<BlkIODevice> devices;
};

struct BlkIOPlan {
  std::vector<BlkIOTarget> targets;
  /// A block left out, one message each naming its owner and why: unresolved, of a type koord
  /// cannot resolve, or a class Koordinator does not configure.
  std::vector<std::string> skipped;
  /// A pod left out: its annotation does not decode, or its cgroup cannot be named.
  std::vector<std::string> errors;
};

/// The "MAJ:MIN" of a device or podvolume block (`pod` set for the latter).
using BlockResolver =
    std::function<kube::Expected<std::string>(const BlockConfig& block, const PodMeta* pod)>;

/// resolveDeviceBlock and resolvePodVolumeBlock under `roots`.
BlockResolver blockResolver(BlkIORoots roots);

/// volumegroup blocks are skipped (the VG's disk needs the LVM lookup), as are podvolume blocks
/// outside a pod's annotation; so are enabled lsrClass and lsClass blocks, which Koordinator
/// does not apply.
BlkIOPlan planBlkIO(const BlkIOQOSStrategy& strategy, const std::vector<PodMeta>& pods,
                    cgroup::CgroupDriver driver, const BlockResolver& resolve);

}  // namespace koord::roles::koordlet::qosmanager
