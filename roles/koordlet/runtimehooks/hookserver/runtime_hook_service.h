// The koordlet's side of Koordinator's RuntimeHookService: what koord runtime-proxy is told to
// change in a pod's or container's CRI request before the runtime creates it.
#pragma once

#include "koordinator/runtime/v1alpha1/api.pb.h"
#include "runtimehooks/hooks/hook_registry.h"

namespace koord::h2 {
class GrpcUnaryServer;
}  // namespace koord::h2

namespace koord::roles::koordlet {

/// Every stage's method, each answered by the hooks `hooks` registered for that stage (in their
/// order; a later hook's value wins), an empty response where none is. A hook never fails a pod.
/// `hooks` and `cgroups` (which hooks may read; null: nothing read) outlive the server.
void addRuntimeHookService(h2::GrpcUnaryServer& server, const HookRegistry& hooks,
                           const cgroup::ResourceExecutor* cgroups);

/// The answers without gRPC, for tests. `stage` is a pod stage or a container stage as the
/// request says.
hookapi::PodSandboxHookResponse podSandboxHookAnswer(HookStage stage,
                                                     const hookapi::PodSandboxHookRequest& req,
                                                     const HookRegistry& hooks,
                                                     const cgroup::ResourceExecutor* cgroups);
hookapi::ContainerResourceHookResponse containerHookAnswer(
    HookStage stage, const hookapi::ContainerResourceHookRequest& req, const HookRegistry& hooks,
    const cgroup::ResourceExecutor* cgroups);

}  // namespace koord::roles::koordlet
