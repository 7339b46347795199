// The CoreSched hook's QoS-level part: cpu.idle (SCHED_IDLE for a whole cgroup, Linux 5.15+) on
// the kubelet's QoS tier cgroups, from the NodeSLO's resourceQOSStrategy, in reconcile mode.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <vector>

#include <boost/json/fwd.hpp>

#include "koord/cgroup/kubepods_path.h"
#include "koord/kube/error.h"

namespace koord::cgroup {
class ResourceExecutor;
}

namespace koord::roles::koordlet {

/// cpu.idle for each QoS tier (indexed by cgroup::QoSTier: kubepods itself for Guaranteed,
/// kubepods/burstable, kubepods/besteffort). Koordinator sets 1 where the class's
/// cpuQOS.schedIdle is 1 and policies.cpuPolicy is "coreSched", 0 everywhere else: BE pods map
/// to besteffort, LS to burstable, and Guaranteed follows LSR when LSR's core sched is enabled,
/// else LS.
struct KubeQOSCPUIdle {
  std::array<int, 3> idle{0, 0, 0};
  int of(cgroup::QoSTier tier) const { return idle[static_cast<std::size_t>(tier)]; }
};

/// Decodes `resourceQOSStrategy` (null: no NodeSLO yet, nothing to decide: nullopt). Missing
/// fields count as Koordinator's defaults (policy groupIdentity, enable false, schedIdle 0); a
/// field of the wrong type or a schedIdle outside 0..1 is an error naming it.
kube::Expected<std::optional<KubeQOSCPUIdle>> decodeKubeQOSCPUIdle(
    const boost::json::object* resource_qos_strategy);

struct CPUIdleApplyStats {
  std::size_t written = 0;
  std::size_t unchanged = 0;
  /// The kernel has no cpu.idle (before 5.15): nothing was written.
  bool unsupported = false;
  /// One message per failed write, naming the file and value. Writes refused by the kernel or
  /// the range check are only counted: the executor logged them.
  std::vector<std::string> errors;
  std::size_t refused = 0;
};

/// Writes each tier's cpu.idle. A tier whose cgroup does not exist yet (no pod of that class has
/// run) is skipped; the next round writes it.
CPUIdleApplyStats applyKubeQOSCPUIdle(cgroup::ResourceExecutor& cgroups,
                                      const KubeQOSCPUIdle& rule);

}  // namespace koord::roles::koordlet
