// Which of the koordlet's runtime hook plugins answer koord runtime-proxy: their feature gates,
// kept apart from the gRPC service so that the koordlet's main need not include gRPC.
#pragma once

namespace koord::roles::koordlet {

/// Koordinator's defaults: BatchResource and CPUSetAllocator on, OOMScoreAdj (alpha) off.
struct RuntimeHookPlugins {
  bool batch_resource = true;  // BatchResource
  bool cpuset = true;          // CPUSetAllocator
  bool oom_score_adj = false;  // OOMScoreAdj
};

}  // namespace koord::roles::koordlet
