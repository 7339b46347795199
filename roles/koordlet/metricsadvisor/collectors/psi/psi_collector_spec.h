// PSICollector (the PSI half of Koordinator's performance collector): pod and container CPU,
// memory and IO pressure into the metric cache and onto koordlet_pod_psi / koordlet_container_psi.
#pragma once

#include <filesystem>
#include <string>

#include "metricsadvisor/framework/collector.h"

namespace koord::roles::koordlet::metricsadvisor {

/// Gate PSICollector, every -psi-collector-interval. On cgroup v2 the pressure files sit in each
/// cgroup; on v1 they are read from cpuacct where the kernel puts them there (Anolis), else from
/// the cgroup2 mount of a hybrid host (<cgroup root>/unified, same relative directories).
CollectorSpec psiCollector();

/// The feature probe: <proc_root>/pressure/cpu when the kernel has no PSI (or it is off), else "".
std::string psiMissingInterface(const std::filesystem::path& proc_root);

}  // namespace koord::roles::koordlet::metricsadvisor
