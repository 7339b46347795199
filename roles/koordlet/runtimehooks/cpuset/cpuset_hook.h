// CPUSetAllocator as a runtime hook: an LSE or LSR pod's containers get the CPUs the scheduler
// bound them to, on create and on update.
#pragma once

#include "runtimehooks/hooks/runtime_hook.h"

namespace koord::roles::koordlet {

/// Runs after BatchResource: a bound container's unlimited quota wins over a batch plan's. A
/// cpuset on any other pod is logged and ignored.
RuntimeHook cpusetHook();

}  // namespace koord::roles::koordlet
