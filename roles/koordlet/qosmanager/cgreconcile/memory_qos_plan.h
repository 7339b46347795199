// The memory QoS values of one round, as Koordinator's CgroupReconcile computes them: for each
// kubelet QoS tier, pod and container cgroup, the memory.min/low/high each pod's request and
// limit give and the watermark and OOM settings of its class.
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "koord/cgroup/cgroup_resource.h"
#include "koord/cgroup/cgroup_version.h"
#include "qosmanager/cgreconcile/memory_qos_policy.h"
#include "statesinformer/pod_meta.h"

namespace koord::roles::koordlet::qosmanager {

/// memory.high's "no limit": written as "max".
inline constexpr std::int64_t kMemoryUnlimited = std::numeric_limits<std::int64_t>::max();

struct MemoryCgroupValue {
  std::string dir;
  cgroup::Resource resource;
  std::int64_t value = 0;
  friend bool operator==(const MemoryCgroupValue&, const MemoryCgroupValue&) = default;
};

/// The cgroup levels, parents before children: the hierarchical values are raised top-down and
/// lowered bottom-up, so that no child is ever left above its parent mid-round.
enum class MemoryQOSLevel : std::uint8_t { kQoS, kPod, kContainer };
inline constexpr std::size_t kMemoryQOSLevels = 3;

struct MemoryQOSPlan {
  std::array<std::vector<MemoryCgroupValue>, kMemoryQOSLevels> levels;
  /// One message per pod or container left out, naming it (a bad annotation, UID or ID).
  std::vector<std::string> errors;
  const std::vector<MemoryCgroupValue>& at(MemoryQOSLevel l) const {
    return levels[static_cast<std::size_t>(l)];
  }
};

struct MemoryQOSNode {
  cgroup::CgroupDriver driver = cgroup::CgroupDriver::kCgroupfs;
  /// status.allocatable's memory: memory.high's ceiling for a container without a memory limit.
  std::optional<std::int64_t> allocatable_memory;
  std::int64_t page_size = 4096;
};

/// bytes * percent / 100 rounded toward zero, without the product's overflow.
std::int64_t percentOfBytes(std::int64_t bytes, std::int64_t percent);

/// A container's memory.high: unlimited for a throttlingPercent of 0; else the request plus that
/// share of the way to the limit (the node's allocatable memory when there is no limit), rounded
/// down to a page. nullopt when the limit is needed and unknown.
std::optional<std::int64_t> containerMemoryHigh(std::int64_t request, std::int64_t limit,
                                                std::optional<std::int64_t> node_allocatable,
                                                std::int64_t throttling_percent,
                                                std::int64_t page_size);

/// The values for the Running and Pending pods of `pods` (others are left alone). Per pod: its
/// class's memoryQOS with its annotation laid over; memory.min and memory.low from its memory
/// request (the batch-memory requests for a pod labelled BE), memory.low raised to memory.min;
/// the watermark and OOM values as configured. Per container the same from its own request,
/// plus memory.high, raised to memory.min. Per tier: memory.min and memory.low summed over its
/// pods (Guaranteed, the parent of the others, over every pod), where it has any, and the OOM
/// values of the tier's class. A pod whose annotation is bad is left out whole, named in errors.
MemoryQOSPlan planMemoryQOS(const MemoryQOSStrategy& strategy, const std::vector<PodMeta>& pods,
                            const MemoryQOSNode& node);

}  // namespace koord::roles::koordlet::qosmanager
