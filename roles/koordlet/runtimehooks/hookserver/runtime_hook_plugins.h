// Which of the koordlet's runtime hook plugins answer koord runtime-proxy: their feature gates,
// kept apart from the gRPC service so that the koordlet's main need not include gRPC.
#pragma once

namespace koord::cgroup {
class ResourceExecutor;
}

namespace koord::roles::koordlet {

/// Koordinator's defaults: BatchResource and CPUSetAllocator on, OOMScoreAdj (alpha) off.
struct RuntimeHookPlugins {
  bool batch_resource = true;  // BatchResource
  bool cpuset = true;          // CPUSetAllocator
  bool oom_score_adj = false;  // OOMScoreAdj
  /// Where BatchResource reads the pod cgroup's quota, so that a container's stays within it:
  /// cgroup v1 refuses more (the container would not start), and CPU suppression may hold the
  /// pod below its own limit. Unset: the plan's quota as it is.
  const cgroup::ResourceExecutor* cgroups = nullptr;
};

}  // namespace koord::roles::koordlet
