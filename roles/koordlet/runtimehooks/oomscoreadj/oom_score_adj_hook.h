// OOMScoreAdj as a runtime hook: a container's oom_score_adj from its pod's annotations, set
// when runtime-proxy creates or updates it.
#pragma once

#include "runtimehooks/hooks/runtime_hook.h"

namespace koord::roles::koordlet {

/// 0 cannot be asked for: proto3 cannot tell it from "unset" in the response (as in
/// Koordinator).
RuntimeHook oomScoreAdjHook();

}  // namespace koord::roles::koordlet
