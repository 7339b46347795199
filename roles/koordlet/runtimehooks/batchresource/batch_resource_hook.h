// BatchResource as a runtime hook: a BE pod's sandbox and containers get their batch cgroup
// values when runtime-proxy creates them, and a reconciler keeps running pods at those values.
#pragma once

#include "runtimehooks/hooks/runtime_hook.h"

namespace koord::roles::koordlet {

RuntimeHook batchResourceHook();

}  // namespace koord::roles::koordlet
