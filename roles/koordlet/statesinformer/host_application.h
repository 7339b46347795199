// NodeSLO spec.hostApplications as the koordlet reads them: processes outside pods (an nginx on
// the host) whose cgroups are measured, subtracted from system usage and reported by name.
#pragma once

#include <boost/json/fwd.hpp>

#include <string>
#include <vector>

#include "koord/apis/extension.h"
#include "koord/cgroup/cgroup_version.h"

namespace koord::roles::koordlet {

/// cgroupPath.base: the directory parentDir and relativePath are joined to.
enum class HostAppCgroupBase { kCgroupRoot, kKubepods, kKubepodsBurstable, kKubepodsBesteffort };

/// One accepted entry. Its parts are checked at decode time, but the directory is only built
/// with the node's cgroup driver (hostAppCgroupDir), which the informer does not know.
struct HostApplication {
  std::string name;
  apis::PriorityClass priority = apis::PriorityClass::kNone;
  apis::QoSClass qos = apis::QoSClass::kNone;
  /// false: no cgroupPath, the directory follows from the QoS and the name.
  bool has_cgroup_path = false;
  HostAppCgroupBase base = HostAppCgroupBase::kCgroupRoot;
  /// Without leading or trailing '/'; either may be empty, not both.
  std::string parent_dir;
  std::string relative_path;
  /// cgroupPath.base is KubepodsBesteffort: the kubelet's besteffort cgroup (and so BE
  /// suppression) already holds the app's processes.
  bool under_kube_besteffort = false;
};

/// An entry left out, with why; kept so the collector can log it once rather than the informer
/// on every NodeSLO event.
struct SkippedHostApplication {
  /// The entry's name, or "hostApplications[<i>]" when it has none usable.
  std::string key;
  std::string reason;
};

struct HostApplications {
  std::vector<HostApplication> apps;
  std::vector<SkippedHostApplication> skipped;
};

/// Decodes spec.hostApplications (`v` may be null for an absent field). Never fails as a whole:
/// a malformed entry, a path component outside [A-Za-z0-9._-:@], "." or "..", an empty name or a
/// repeated one is skipped with its reason, so the NodeSLO's other strategies still apply.
HostApplications decodeHostApplications(const boost::json::value* v);

/// The app's cgroup directory relative to each subsystem's root (v1) or the unified root (v2):
/// without cgroupPath "host-latency-sensitive/<name>" for LSE/LSR/LS, "host-best-effort/<name>"
/// for BE, "<name>" otherwise; with it, base (the kubepods or QoS tier directory of `driver`, or
/// the root) / parentDir / relativePath.
std::string hostAppCgroupDir(cgroup::CgroupDriver driver, const HostApplication& app);

}  // namespace koord::roles::koordlet
