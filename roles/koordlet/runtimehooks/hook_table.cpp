#include "runtimehooks/hook_table.h"

#include "runtimehooks/batchresource/batch_resource_hook.h"
#include "runtimehooks/coresched/core_sched_hook.h"
#include "runtimehooks/cpuset/cpuset_hook.h"
#include "runtimehooks/gpu/gpu_env_hook.h"
#include "runtimehooks/groupidentity/group_identity_hook.h"
#include "runtimehooks/oomscoreadj/oom_score_adj_hook.h"
#include "runtimehooks/rdma/rdma_device_hook.h"

namespace koord::roles::koordlet {

std::span<const RuntimeHook> koordletRuntimeHooks() {
  // One line per hook, as the table's readers expect; clang-format would pack them.
  // clang-format off
  static const RuntimeHook kHooks[] = {
      groupIdentityHook(),
      batchResourceHook(),
      cpusetHook(),
      oomScoreAdjHook(),
      coreSchedHook(),
      gpuEnvInjectHook(),
      rdmaDeviceInjectHook(),
  };
  // clang-format on
  return kHooks;
}

}  // namespace koord::roles::koordlet
