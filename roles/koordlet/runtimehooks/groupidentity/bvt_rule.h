// GroupIdentity's rule (Koordinator's bvtRule): the cpu.bvt_warp_ns each QoS tier cgroup, pod
// and host application gets from the NodeSLO's resourceQOSStrategy, on Anolis kernels whose
// group identity gives LS pods' threads the CPU ahead of BE ones.
#pragma once

#include <boost/json/fwd.hpp>

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

#include "koord/apis/extension.h"
#include "koord/cgroup/kubepods_path.h"
#include "koord/kube/error.h"

namespace koord::roles::koordlet {

/// Koordinator's NoneCPUQOS group identity: what every cgroup gets when its class's cpuQOS is off.
inline constexpr std::int64_t kBvtNone = 0;

struct BvtRule {
  /// Some class's cpuQOS is enabled under the groupIdentity policy: the kernel switch
  /// (kernel.sched_group_identity_enabled) is turned on where the kernel has one.
  bool enable = false;
  /// By koord QoS class: LSE and LSR share lsr.
  std::int64_t lsr = kBvtNone;
  std::int64_t ls = kBvtNone;
  std::int64_t be = kBvtNone;
  /// By the pod's Kubernetes QoS, for pods without a koord class: Guaranteed follows LSR when
  /// LSR is enabled, else LS; Burstable follows LS; BestEffort follows BE.
  std::array<std::int64_t, 3> tier_pod{kBvtNone, kBvtNone, kBvtNone};
  /// The QoS tier cgroups themselves (indexed by cgroup::QoSTier). kubepods (Guaranteed) stays
  /// 0: Koordinator keeps the root of all pods neutral.
  std::array<std::int64_t, 3> tier_dir{kBvtNone, kBvtNone, kBvtNone};

  /// A pod's value: by its koordinator.sh/qosClass label when that is LSE, LSR, LS or BE, else by
  /// its Kubernetes QoS.
  std::int64_t podValue(apis::QoSClass raw_qos, apis::KubeQoS kube_qos) const;
  std::int64_t tierValue(cgroup::QoSTier tier) const {
    return tier_dir[static_cast<std::size_t>(tier)];
  }
  /// A host application's value by its QoS class (0 for SYSTEM and none).
  std::int64_t hostAppValue(apis::QoSClass qos) const;
  friend bool operator==(const BvtRule&, const BvtRule&) = default;
};

/// Decodes `resourceQOSStrategy` (null: no NodeSLO yet, nullopt). policies.cpuPolicy absent, ""
/// or "groupIdentity" is the groupIdentity policy; any other policy (coreSched) resets every
/// value to 0. Absent fields take Koordinator's defaults (enable false; groupIdentity 2 for LSR
/// and LS, -1 for BE). Errors name the field: a JSON type other than Go's, a groupIdentity
/// outside [-1, 2].
kube::Expected<std::optional<BvtRule>> decodeBvtRule(
    const boost::json::object* resource_qos_strategy);

}  // namespace koord::roles::koordlet
