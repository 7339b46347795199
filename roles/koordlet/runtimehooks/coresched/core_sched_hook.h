// CoreSched as a runtime hook: its QoS-level part only, cpu.idle on the kubelet's QoS tiers from
// the NodeSLO, reconciled on the interval (it answers runtime-proxy at no stage).
#pragma once

#include "runtimehooks/hooks/runtime_hook.h"

namespace koord::roles::koordlet {

RuntimeHook coreSchedHook();

}  // namespace koord::roles::koordlet
