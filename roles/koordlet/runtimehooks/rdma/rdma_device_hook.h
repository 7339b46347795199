// RDMADeviceInject as a runtime hook: a container of a pod given RDMA virtual functions gets
// their uverbs devices and rdma_cm when runtime-proxy creates it.
#pragma once

#include "runtimehooks/hooks/runtime_hook.h"

namespace koord::roles::koordlet {

/// PreCreateContainer only. Anything that does not resolve (a malformed annotation, a function
/// without a uverbs device) is logged and the container left as the kubelet asked.
RuntimeHook rdmaDeviceInjectHook();

}  // namespace koord::roles::koordlet
