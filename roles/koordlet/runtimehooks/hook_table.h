// The koordlet's runtime hooks, one line each: what the hook server and the reconciler run, each
// hook where its feature gate is on.
#pragma once

#include <span>

#include "runtimehooks/hooks/runtime_hook.h"

namespace koord::roles::koordlet {

/// In the order they run at a stage: a later hook's value wins (CPUSetAllocator's unlimited
/// quota over BatchResource's).
std::span<const RuntimeHook> koordletRuntimeHooks();

}  // namespace koord::roles::koordlet
