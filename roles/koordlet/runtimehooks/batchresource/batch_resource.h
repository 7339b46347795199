// The BatchResource hook: the cgroup values a BE pod's batch-cpu / batch-memory resources mean
// (cpu.shares from requests, CFS quota and memory limit from limits), for the pod and each
// container, and their application to the pod's cgroups in reconcile mode.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "koord/cgroup/cpu_topology.h"
#include "statesinformer/pod_meta.h"

namespace koord::cgroup {
class ResourceExecutor;
}

namespace koord::roles::koordlet {

struct CgroupValues {
  std::int64_t cpu_shares = 2;
  /// -1: unlimited (some container has no batch-cpu limit).
  std::int64_t cfs_quota = -1;
  /// -1: unlimited.
  std::int64_t memory_limit = -1;
};

struct BatchResourcePlan {
  CgroupValues pod;
  /// Same order as PodMeta::containers.
  std::vector<CgroupValues> containers;
};

/// The largest CFS quota written (period 100000): every CPU Linux can have.
inline constexpr std::int64_t kMaxCFSQuota = std::int64_t{cgroup::kMaxCpuId + 1} * 100000;

/// Koordinator's MilliCPUToShares: milli * 1024 / 1000 within [2, 262144]; 2 for none. Huge
/// amounts saturate instead of overflowing.
std::int64_t milliCPUToShares(std::int64_t milli);
/// Koordinator's MilliCPUToQuota (period 100000): milli * 100 within [1000, kMaxCFSQuota]; -1
/// for none. Huge amounts saturate instead of overflowing.
std::int64_t milliCPUToQuota(std::int64_t milli);

/// nullopt unless the pod is koord QoS BE (its label) and some container names batch-cpu or
/// batch-memory (a BE pod without batch resources keeps the kubelet's values).
std::optional<BatchResourcePlan> planBatchResource(const PodMeta& pod);

struct ApplyStats {
  std::size_t written = 0;
  std::size_t unchanged = 0;
  /// One message per failed write (naming the file and value); the rest were still applied.
  /// Refused writes (by the kernel or the range check) are only counted: the executor logged them.
  std::vector<std::string> errors;
  std::size_t refused = 0;
};

/// Writes the plan to the pod's cgroup and its containers' (those with a runtime ID).
ApplyStats applyBatchResource(cgroup::ResourceExecutor& cgroups, const PodMeta& pod,
                              const BatchResourcePlan& plan);

}  // namespace koord::roles::koordlet
