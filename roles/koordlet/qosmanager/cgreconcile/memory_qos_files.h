// The cgroup files memory QoS writes and which of them this kernel has: memory.min, memory.low
// and memory.high on cgroup v2 and Anolis v1; the watermark and OOM files on Anolis only.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "koord/cgroup/cgroup_resource.h"
#include "koord/cgroup/resource_executor.h"

namespace koord::roles::koordlet::qosmanager {

/// In the order of the writes (Koordinator's).
inline constexpr std::array<cgroup::Resource, 9> kMemoryQOSResources = {
    cgroup::Resource::kMemoryMin,
    cgroup::Resource::kMemoryLow,
    cgroup::Resource::kMemoryHigh,
    cgroup::Resource::kMemoryWmarkRatio,
    cgroup::Resource::kMemoryWmarkScaleFactor,
    cgroup::Resource::kMemoryWmarkMinAdj,
    cgroup::Resource::kMemoryPriority,
    cgroup::Resource::kMemoryUsePriorityOom,
    cgroup::Resource::kMemoryOomGroup,
};

/// memory.min, memory.low and memory.high: hierarchical, byte-valued, raised top-down and
/// lowered bottom-up.
bool hierarchicalMemoryResource(cgroup::Resource r);

struct MissingMemoryFile {
  cgroup::Resource resource;
  std::string path;
};
/// The memory QoS files absent from the kubepods cgroup, where a kernel that has them has them
/// all (Koordinator's check): these are skipped everywhere.
std::vector<MissingMemoryFile> missingMemoryQOSFiles(const cgroup::ResourceExecutor& cgroups);

/// The feature probe: the path of memory.min in the kubepods cgroup (v2's, or an Anolis v1
/// kernel's) when it is missing, else "".
std::string memoryQOSMissingInterface(const cgroup::ResourceExecutor& cgroups);

}  // namespace koord::roles::koordlet::qosmanager
