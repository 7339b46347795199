// Writes a BlkIOReconcile plan: in each target's files, every planned device's setting the file
// does not hold yet, and a reset for every device the file names that the plan does not.
#pragma once

#include <array>
#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "koord/cgroup/cgroup_resource.h"
#include "koord/cgroup/resource_executor.h"
#include "qosmanager/blkio/blkio_plan.h"

namespace koord::roles::koordlet::qosmanager {

/// A tier's or pod's files, in Koordinator's order of writes.
inline constexpr std::array<cgroup::Resource, 5> kBlkIOCgroupResources = {
    cgroup::Resource::kBlkioReadIops,  cgroup::Resource::kBlkioReadBps,
    cgroup::Resource::kBlkioWriteIops, cgroup::Resource::kBlkioWriteBps,
    cgroup::Resource::kBlkioWeight,
};
/// The root's blk-iocost files.
inline constexpr std::array<cgroup::Resource, 2> kBlkIORootResources = {
    cgroup::Resource::kBlkioCostQos,
    cgroup::Resource::kBlkioCostModel,
};

/// A root file's path: <root>/blkio/blkio.cost.qos on v1, <root>/io.cost.qos on v2.
std::filesystem::path blkioRootFile(const cgroup::ResourceExecutor& cgroups, cgroup::Resource r);

struct MissingBlkIOFile {
  cgroup::Resource resource;
  std::string path;
};
/// The files this kernel lacks, looked for where Koordinator looks: the throttles and the
/// weight in the kubepods cgroup, blk-iocost's at the root. They are skipped everywhere.
std::vector<MissingBlkIOFile> missingBlkIOFiles(const cgroup::ResourceExecutor& cgroups);

/// The feature probe: the read throttle file of the kubepods cgroup (v1's
/// blkio.throttle.read_bps_device, v2's io.max) when it is missing, else "".
std::string blkioMissingInterface(const cgroup::ResourceExecutor& cgroups);

struct BlkIOApplyStats {
  std::size_t written = 0;
  std::size_t unchanged = 0;
  /// Of the written: resets of devices that no block names.
  std::size_t reset = 0;
  /// Targets whose cgroup is not there (a pod not started yet).
  std::size_t absent = 0;
  /// One message per failure the executor has not logged already, naming the file.
  std::vector<std::string> errors;
};

/// Resources in `skip` are never read or written. The cost model is written for planned devices
/// only (Koordinator never resets it).
BlkIOApplyStats applyBlkIOPlan(const BlkIOPlan& plan, const std::vector<cgroup::Resource>& skip,
                               cgroup::ResourceExecutor& cgroups);

}  // namespace koord::roles::koordlet::qosmanager
