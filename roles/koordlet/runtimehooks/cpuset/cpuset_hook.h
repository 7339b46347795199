// CPUSetAllocator as a runtime hook: containers get the CPUs the scheduler bound them to (LSE,
// LSR) or their share of the node's CPU pools, on create and on update, and in reconcile mode.
#pragma once

#include "runtimehooks/hooks/runtime_hook.h"

namespace koord::roles::koordlet {

/// Runs after BatchResource: a bound container's unlimited quota wins over a batch plan's. A
/// cpuset on any other pod is logged and ignored. The pools come from cpusetRuleStore(); without
/// a rule (no NodeResourceTopology read yet) only bound pods get a cpuset.
RuntimeHook cpusetHook();

}  // namespace koord::roles::koordlet
