#include "runtimehooks/rdma/rdma_device_hook.h"

#include "koord/core/log.h"
#include "koordinator/runtime/v1alpha1/api.pb.h"
#include "runtimehooks/rdma/rdma_devices.h"
#include "statesinformer/pod_meta.h"

namespace koord::roles::koordlet {

namespace {

void containerHook(const ContainerHookContext& ctx, hookapi::ContainerResourceHookResponse& out) {
  const auto& req = ctx.request;
  auto devices = rdmaContainerDevices(ctx.annotations());
  if (!devices) {
    KOORD_LOG_ERROR("runtime hook RDMADeviceInject: pod {}: {}", podIdentity(req.pod_meta()).key(),
                    devices.error().message);
    return;
  }
  for (const auto& d : *devices) {
    auto* device = out.add_container_devices();
    device->set_container_path(d.path);
    device->set_host_path(d.path);
    device->set_permissions("rwm");
  }
  if (!devices->empty())
    KOORD_VLOG(4, "runtime hook RDMADeviceInject: {}/{}: {} devices",
               podIdentity(req.pod_meta()).key(), req.container_meta().name(), devices->size());
}

}  // namespace

RuntimeHook rdmaDeviceInjectHook() {
  return {
      .name = "RDMADeviceInject",
      .gate = "RDMADeviceInject",
      .description = "inject the allocated RDMA devices into container",
      .stages = {HookStage::kPreCreateContainer},
      .container_hook = containerHook,
  };
}

}  // namespace koord::roles::koordlet
