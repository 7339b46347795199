#include "runtimehooks/cpuset/cpuset_hook.h"

#include "koord/core/log.h"
#include "koordinator/runtime/v1alpha1/api.pb.h"
#include "runtimehooks/cpuset/cpuset_allocator.h"
#include "statesinformer/pod_meta.h"

namespace koord::roles::koordlet {

namespace {

void containerHook(const ContainerHookContext& ctx, hookapi::ContainerResourceHookResponse& out) {
  const auto& req = ctx.request;
  const kube::Labels labels(req.pod_labels().begin(), req.pod_labels().end());
  auto binding = podCPUSetBinding(labels, ctx.annotations());
  if (!binding) {
    KOORD_LOG_ERROR("runtime hook CPUSetAllocator: pod {}: {}: {}",
                    podIdentity(req.pod_meta()).key(), kAnnotationResourceStatus,
                    binding.error().message);
  } else if (*binding) {
    auto& resources = *out.mutable_container_resources();
    resources.set_cpuset_cpus((*binding)->cpus);
    resources.set_cpu_quota(-1);  // wins over BatchResource's quota: bound CPUs, no throttle
    KOORD_VLOG(4, "runtime hook CPUSetAllocator: {}/{}: cpuset {}",
               podIdentity(req.pod_meta()).key(), req.container_meta().name(), (*binding)->cpus);
  }
}

}  // namespace

RuntimeHook cpusetHook() {
  return {
      .name = "CPUSetAllocator",
      .gate = "CPUSetAllocator",
      .description = "the cpuset the scheduler bound an LSE or LSR pod to, without a CFS quota",
      .stages = {HookStage::kPreCreateContainer, HookStage::kPreUpdateContainerResources},
      .container_hook = containerHook,
  };
}

}  // namespace koord::roles::koordlet
