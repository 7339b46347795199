// Writes a round's memory QoS values in Koordinator's leveled order, so that a hierarchical
// value (memory.min, memory.low, memory.high) never leaves a child above its parent mid-round.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "koord/cgroup/cgroup_resource.h"
#include "koord/cgroup/resource_executor.h"
#include "qosmanager/cgreconcile/memory_qos_plan.h"

namespace koord::roles::koordlet::qosmanager {

struct MemoryQOSApplyStats {
  std::size_t written = 0;
  std::size_t unchanged = 0;
  /// Values whose cgroup is not there (a pod not started yet, a container gone).
  std::size_t absent = 0;
  /// One message per failure the executor has not logged already, naming the file.
  std::vector<std::string> errors;
};

/// First parents before children: the watermark and OOM values, and each hierarchical value
/// that is above the file's. Then children before parents: each hierarchical value. Resources in
/// `skip` (files the kernel lacks) are never touched. A value the file holds already is not
/// written: byte values compare by `page_size` pages (the kernel keeps pages), and "max" equals
/// v1's huge "no limit" number.
MemoryQOSApplyStats applyMemoryQOSPlan(const MemoryQOSPlan& plan,
                                       const std::vector<cgroup::Resource>& skip,
                                       std::int64_t page_size, cgroup::ResourceExecutor& cgroups);

}  // namespace koord::roles::koordlet::qosmanager
