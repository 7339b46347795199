#include "runtimehooks/gpu/gpu_env_hook.h"

#include "koord/core/log.h"
#include "koordinator/runtime/v1alpha1/api.pb.h"
#include "runtimehooks/gpu/gpu_env.h"
#include "statesinformer/pod_meta.h"

namespace koord::roles::koordlet {

namespace {

void containerHook(const ContainerHookContext& ctx, hookapi::ContainerResourceHookResponse& out) {
  const auto& req = ctx.request;
  const kube::Labels labels(req.pod_labels().begin(), req.pod_labels().end());
  auto env = gpuContainerEnv(ctx.annotations(), labels);
  if (!env) {
    KOORD_LOG_ERROR("runtime hook GPUEnvInject: pod {}: {}", podIdentity(req.pod_meta()).key(),
                    env.error().message);
    return;
  }
  if (env->envs.empty())
    return;
  auto& envs = *out.mutable_container_envs();
  for (const auto& [key, value] : env->envs)
    envs[key] = value;
  for (const auto& m : env->mounts) {
    auto* mount = out.add_container_mounts();
    mount->set_container_path(m.path);
    mount->set_host_path(m.path);
  }
  KOORD_VLOG(4, "runtime hook GPUEnvInject: {}/{}: {}={}", podIdentity(req.pod_meta()).key(),
             req.container_meta().name(), kEnvNvidiaVisibleDevices, env->envs.front().second);
}

}  // namespace

RuntimeHook gpuEnvInjectHook() {
  return {
      .name = "GPUEnvInject",
      .gate = "GPUEnvInject",
      .description = "inject NVIDIA_VISIBLE_DEVICES env into container",
      .stages = {HookStage::kPreCreateContainer},
      .container_hook = containerHook,
  };
}

}  // namespace koord::roles::koordlet
