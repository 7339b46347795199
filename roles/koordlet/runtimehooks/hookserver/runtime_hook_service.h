// The koordlet's side of Koordinator's RuntimeHookService: what koord runtime-proxy is told to
// change in a pod's or container's CRI request before the runtime creates it.
#pragma once

#include "koordinator/runtime/v1alpha1/api.pb.h"
#include "runtimehooks/hookserver/runtime_hook_plugins.h"

namespace koord::h2 {
class GrpcUnaryServer;
}  // namespace koord::h2

namespace koord::roles::koordlet {

namespace hookapi = ::runtime::v1alpha1;

/// The plugins, each the same policy as its reconciler, applied before the container starts:
/// - BatchResource: a BE pod's batch-cpu and batch-memory (extended-resource-spec annotation)
///   become its containers' cpu.shares, CFS quota and memory limit;
/// - CPUSetAllocator: an LSE or LSR pod bound to CPUs (resource-status annotation's cpuset)
///   gets that cpuset and an unlimited CFS quota, on create and on update; a cpuset on any
///   other pod is logged and ignored;
/// - OOMScoreAdj: the container's oom_score_adj from oom-score-adj-spec / oom-score-adj (0
///   cannot be asked for: proto3 cannot tell it from "unset", as in Koordinator).
/// Anything else is answered with no change. A hook never fails a pod: an annotation that does
/// not parse is logged (with the pod's key) and that plugin skipped.
void addRuntimeHookService(h2::GrpcUnaryServer& server, RuntimeHookPlugins plugins = {});

/// The answers without gRPC, for tests.
hookapi::PodSandboxHookResponse podSandboxHookAnswer(const hookapi::PodSandboxHookRequest& req,
                                                     const RuntimeHookPlugins& plugins = {});
hookapi::ContainerResourceHookResponse containerHookAnswer(
    const hookapi::ContainerResourceHookRequest& req, const RuntimeHookPlugins& plugins = {});

}  // namespace koord::roles::koordlet
