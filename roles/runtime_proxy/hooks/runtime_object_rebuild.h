// Refills the RuntimeObjectCache from the runtime when the proxy starts, so that pods and
// containers created through an earlier proxy process keep getting their hooks after a restart.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>

namespace koord::roles::runtime_proxy {

class RuntimeObjectCache;

struct RebuildResult {
  /// Empty when the pass succeeded.
  std::string error;
  std::size_t sandboxes = 0;
  std::size_t containers = 0;
};

/// One pass over the runtime at `runtime_target` (a gRPC unix: target): ListPodSandbox and
/// ListContainers in CRI v1, or v1alpha2 where the runtime lacks v1; each ready sandbox's
/// cgroup parent from its verbose status. What the runtime cannot say (a container's
/// environment and resources) stays empty, as in Koordinator's failover. Entries already in
/// `cache` (created through this process meanwhile) are kept.
RebuildResult rebuildRuntimeObjects(const std::string& runtime_target, RuntimeObjectCache& cache,
                                    std::chrono::milliseconds call_timeout);

/// Runs rebuild passes on its own thread until one succeeds (the runtime may come up after the
/// proxy), logging the first failure and the success; the destructor stops it.
class RuntimeObjectRebuilder {
 public:
  RuntimeObjectRebuilder(std::string runtime_target, RuntimeObjectCache& cache);
  ~RuntimeObjectRebuilder();
  RuntimeObjectRebuilder(const RuntimeObjectRebuilder&) = delete;
  RuntimeObjectRebuilder& operator=(const RuntimeObjectRebuilder&) = delete;

  /// Whether a pass has succeeded, waiting up to `wait` for one.
  bool waitDone(std::chrono::milliseconds wait) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace koord::roles::runtime_proxy
