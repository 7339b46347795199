#include "runtimehooks/oomscoreadj/oom_score_adj_hook.h"

#include "koord/core/log.h"
#include "koordinator/runtime/v1alpha1/api.pb.h"
#include "runtimehooks/oomscoreadj/oom_score_adj.h"
#include "statesinformer/pod_meta.h"

namespace koord::roles::koordlet {

namespace {

void containerHook(const ContainerHookContext& ctx, hookapi::ContainerResourceHookResponse& out) {
  auto adj = containerOOMScoreAdj(ctx.annotations(), ctx.request.container_meta().name());
  if (!adj)
    KOORD_LOG_ERROR("runtime hook OOMScoreAdj: pod {}: {}",
                    podIdentity(ctx.request.pod_meta()).key(), adj.error().message);
  else if (*adj)
    out.mutable_container_resources()->set_oom_score_adj(**adj);
}

}  // namespace

RuntimeHook oomScoreAdjHook() {
  return {
      .name = "OOMScoreAdj",
      .gate = "OOMScoreAdj",
      .description = "a container's oom_score_adj from oom-score-adj-spec or oom-score-adj",
      .stages = {HookStage::kPreCreateContainer, HookStage::kPreUpdateContainerResources},
      .container_hook = containerHook,
  };
}

}  // namespace koord::roles::koordlet
