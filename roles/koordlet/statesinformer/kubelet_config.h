// The kubelet's configuration as its /configz serves it, and what the koordlet derives from it
// for the NodeResourceTopology: the CPU manager policy and its reserved CPUs, the topology policy.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "koord/apis/node_resource_topology.h"
#include "koord/cgroup/cpu_topology.h"
#include "koord/kube/error.h"

namespace koord::roles::koordlet {

/// The longest /configz body read: a KubeletConfiguration is a few KiB.
inline constexpr std::size_t kMaxKubeletConfigzBytes = 1 << 20;

/// The fields of KubeletConfiguration the koordlet reads, with the kubelet's defaults.
struct KubeletConfig {
  std::string cpu_manager_policy = "none";
  std::map<std::string, std::string, std::less<>> cpu_manager_policy_options;
  /// reservedSystemCPUs, as written ("" when unset).
  std::string reserved_system_cpus;
  /// kubeReserved.cpu and systemReserved.cpu in millicores.
  std::int64_t kube_reserved_milli_cpu = 0;
  std::int64_t system_reserved_milli_cpu = 0;
  std::string topology_manager_policy = "none";
  std::string topology_manager_scope = "container";

  friend bool operator==(const KubeletConfig&, const KubeletConfig&) = default;
};

/// Parses the /configz body ({"kubeletconfig": {...}}); errors name the field. Bodies past
/// kMaxKubeletConfigzBytes are refused unread.
kube::Expected<KubeletConfig> parseKubeletConfigz(std::string_view body);

/// Koordinator's GetStaticCPUManagerPolicyReservedCPUs: for the static policy, reservedSystemCPUs
/// when set, else ceil(kubeReserved.cpu + systemReserved.cpu) CPUs taken as the kubelet's static
/// policy takes them (takeByTopology over all CPUs); "" for other policies. Errors: none reserved,
/// more than the node has, or a list that does not parse.
kube::Expected<std::string> staticPolicyReservedCpus(const KubeletConfig& config,
                                                     const cgroup::CpuTopology& topology);

/// What the koordlet reports in kubelet.koordinator.sh/cpu-manager-policy; a reserved-CPU error
/// leaves reservedCPUs empty (Koordinator logs it and goes on), told through `warning`.
apis::KubeletCPUManagerPolicy cpuManagerPolicyOf(const KubeletConfig& config,
                                                 const cgroup::CpuTopology& topology,
                                                 std::string& warning);

}  // namespace koord::roles::koordlet
