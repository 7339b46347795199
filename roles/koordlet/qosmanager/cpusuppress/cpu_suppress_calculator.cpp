#include "qosmanager/cpusuppress/cpu_suppress_calculator.h"

#include <algorithm>

#include "koord/core/saturating.h"

namespace koord::roles::koordlet::qosmanager {

bool isNonBEPod(apis::QoSClass koord_qos, apis::KubeQoS kube_qos) {
  return koord_qos != apis::QoSClass::kBE && kube_qos != apis::KubeQoS::kBestEffort;
}

bool isNonBEHostApp(apis::QoSClass qos, bool under_kube_besteffort) {
  return qos != apis::QoSClass::kBE || !under_kube_besteffort;
}

SuppressResult calculateBESuppressCPU(const SuppressInput& in) {
  SuppressResult r;
  std::int64_t pods_used = 0;
  for (const PodCPUUsage& p : in.pods) {
    pods_used = saturatingAdd(pods_used, p.used_milli);
    if (!p.known || isNonBEPod(p.koord_qos, p.kube_qos))
      r.non_be_pods_used_milli = saturatingAdd(r.non_be_pods_used_milli, p.used_milli);
  }
  std::int64_t host_apps_used = 0;
  for (const HostAppCPUUsage& a : in.host_apps) {
    host_apps_used = saturatingAdd(host_apps_used, a.used_milli);
    if (isNonBEHostApp(a.qos, a.under_kube_besteffort))
      r.non_be_host_apps_used_milli = saturatingAdd(r.non_be_host_apps_used_milli, a.used_milli);
  }
  // Usage outside pods and host apps is the system's; never less than what the node reserves
  // for it, so a quiet system still leaves its reservation out of the BE budget. Saturating:
  // the figures may come from an API object (koord top reads them from NodeMetrics).
  r.system_used_milli =
      std::max(std::max<std::int64_t>(
                   saturatingSub(saturatingSub(in.node_used_milli, pods_used), host_apps_used), 0),
               in.node_reserved_milli);
  r.suppress_milli = saturatingSub(
      saturatingSub(saturatingSub(saturatingMul(in.node_capacity_milli, in.threshold_percent) / 100,
                                  r.non_be_pods_used_milli),
                    r.non_be_host_apps_used_milli),
      r.system_used_milli);
  if (in.min_percent) {
    const std::int64_t floor = saturatingMul(in.node_capacity_milli, *in.min_percent) / 100;
    r.suppress_milli = std::max(r.suppress_milli, floor);
  }
  return r;
}

}  // namespace koord::roles::koordlet::qosmanager
