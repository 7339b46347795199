// How much CPU best-effort pods may use this round: the node's LS budget minus what non-BE pods,
// non-BE host applications and the system already use. Pure arithmetic over collected usage.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "koord/apis/extension.h"

namespace koord::roles::koordlet::qosmanager {

/// One pod the metric cache has a CPU usage for.
struct PodCPUUsage {
  std::int64_t used_milli = 0;
  /// false for a pod the metric cache reports but the states informer no longer (or not yet)
  /// lists: Koordinator counts such a pod as non-BE, erring towards protecting LS pods.
  bool known = true;
  /// The koordinator.sh/qosClass label only (podQoSClassRaw), not the one defaulted from the
  /// Kubernetes QoS: classification reads the two separately.
  apis::QoSClass koord_qos = apis::QoSClass::kNone;
  apis::KubeQoS kube_qos = apis::KubeQoS::kBurstable;
};

/// One NodeSLO host application the metric cache has a CPU usage for (leave out those without).
struct HostAppCPUUsage {
  std::int64_t used_milli = 0;
  apis::QoSClass qos = apis::QoSClass::kNone;
  /// cgroupPath.base is KubeBesteffort: the app runs inside the besteffort cgroup.
  bool under_kube_besteffort = false;
};

struct SuppressInput {
  std::int64_t node_capacity_milli = 0;
  std::int64_t node_used_milli = 0;
  /// max(kubelet reserved, the node's reservation annotation) cpu, as the caller found it.
  std::int64_t node_reserved_milli = 0;
  std::vector<PodCPUUsage> pods;
  std::vector<HostAppCPUUsage> host_apps;
  std::int64_t threshold_percent = 65;
  std::optional<std::int64_t> min_percent;
};

/// The result and its terms, for logs and metrics.
struct SuppressResult {
  std::int64_t non_be_pods_used_milli = 0;
  std::int64_t non_be_host_apps_used_milli = 0;
  /// max(node used - all pods - all host apps (at least 0), node reserved).
  std::int64_t system_used_milli = 0;
  /// What BE may use. Negative when LS and system usage exceed the budget and no min percent is
  /// set; Koordinator keeps the sign and lets each policy clamp it (cpuset: 2 CPUs, cfsQuota:
  /// 2000us).
  std::int64_t suppress_milli = 0;
};

/// A pod is non-BE unless its koord QoS label is BE or its Kubernetes QoS is BestEffort (so a
/// BestEffort pod without a label is BE, and so is an LS-labelled BestEffort pod).
bool isNonBEPod(apis::QoSClass koord_qos, apis::KubeQoS kube_qos);
/// A host application is BE only when its QoS is BE and it runs under the besteffort cgroup.
bool isNonBEHostApp(apis::QoSClass qos, bool under_kube_besteffort);

/// suppress = capacity x threshold / 100 - non-BE pods - non-BE host apps - system used, then
/// raised to capacity x min / 100 when a min percent is set. Integer milli-cores throughout
/// (the percent products truncate as Koordinator's int64 arithmetic does).
SuppressResult calculateBESuppressCPU(const SuppressInput& in);

}  // namespace koord::roles::koordlet::qosmanager
