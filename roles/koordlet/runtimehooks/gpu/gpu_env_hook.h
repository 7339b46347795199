// GPUEnvInject as a runtime hook: a container of a pod given GPUs learns which ones
// (NVIDIA_VISIBLE_DEVICES) and, under HAMi-core, its share, when runtime-proxy creates it.
#pragma once

#include "runtimehooks/hooks/runtime_hook.h"

namespace koord::roles::koordlet {

/// PreCreateContainer only: the environment is fixed once the container exists. A malformed
/// device-allocated annotation is logged and the container left as the kubelet asked.
RuntimeHook gpuEnvInjectHook();

}  // namespace koord::roles::koordlet
