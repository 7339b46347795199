// The kubelet's cgroup layout for pods: kubepods / burstable / besteffort / pod<uid> /
// <container id>, spelled for the cgroupfs or the systemd driver, built only from checked UIDs/IDs.
#pragma once

#include <string>
#include <string_view>

#include "koord/cgroup/cgroup_version.h"
#include "koord/core/expected.h"

namespace koord::cgroup {

/// The kubelet's pod QoS tiers, each with its own parent cgroup (Guaranteed pods sit directly in
/// kubepods).
enum class QoSTier { kGuaranteed, kBurstable, kBestEffort };

/// A pod UID as the API server (an RFC 4122 UUID) or the kubelet (a static pod's 32 hex digit
/// config hash) writes it: lowercase hex digits and dashes, 32 to 36 characters.
bool validPodUid(std::string_view uid);
/// A container ID as containerd, CRI-O and Docker write it: exactly 64 lowercase hex digits.
bool validContainerId(std::string_view id);

/// A containerStatuses[].containerID ("containerd://<64 hex>"): the runtime name and the ID,
/// each checked; an error for anything else.
struct ContainerRef {
  std::string runtime;
  std::string id;
};
Expected<ContainerRef> parseContainerStatusId(std::string_view container_id);

/// Directories relative to a subsystem root (v1) or the unified root (v2), without a leading
/// slash: "kubepods" / "kubepods.slice".
std::string kubepodsDir(CgroupDriver d);
/// "kubepods/besteffort", "kubepods.slice/kubepods-besteffort.slice"; Guaranteed is kubepodsDir.
std::string qosTierDir(CgroupDriver d, QoSTier tier);
/// "kubepods/besteffort/pod<uid>", "kubepods.slice/kubepods-besteffort.slice/
/// kubepods-besteffort-pod<uid with _ for ->.slice"; an error naming the UID when it is not one.
Expected<std::string> podDir(CgroupDriver d, QoSTier tier, std::string_view uid);
/// <podDir>/<id> (cgroupfs) or <podDir>/<runtime prefix>-<id>.scope (systemd: cri-containerd-,
/// docker-, crio-); an error when the ID or runtime is not one we know.
Expected<std::string> containerDir(CgroupDriver d, std::string_view pod_dir,
                                   std::string_view runtime, std::string_view id);

/// The directory a CRI cgroup parent names (what kubelet hands the runtime and runtime-proxy
/// passes to hooks): "/kubepods/besteffort/pod<uid>" under cgroupfs, a systemd slice name
/// "kubepods-besteffort-pod<uid>.slice" (each '-' a level:
/// kubepods.slice/kubepods-besteffort.slice/
/// ...) or a path of slices under systemd. An error for anything validRelativeDir refuses.
Expected<std::string> cgroupParentDir(CgroupDriver d, std::string_view parent);

/// A relative cgroup directory as the functions above make them: components of letters, digits,
/// '.', '_', '-' and '@', none of them "." or "..", no leading or trailing or double slash.
/// The writer refuses any other directory before it touches the file system.
bool validRelativeDir(std::string_view dir);

}  // namespace koord::cgroup
