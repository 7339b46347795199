#include "runtimehooks/hook_table.h"

#include "runtimehooks/batchresource/batch_resource_hook.h"
#include "runtimehooks/coresched/core_sched_hook.h"
#include "runtimehooks/cpuset/cpuset_hook.h"
#include "runtimehooks/oomscoreadj/oom_score_adj_hook.h"

namespace koord::roles::koordlet {

std::span<const RuntimeHook> koordletRuntimeHooks() {
  static const RuntimeHook kHooks[] = {
      batchResourceHook(),
      cpusetHook(),
      oomScoreAdjHook(),
      coreSchedHook(),
  };
  return kHooks;
}

}  // namespace koord::roles::koordlet
