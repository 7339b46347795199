// Between CRI requests (either version) and Koordinator's hook messages: what a hook is told
// about a pod or container, and how its answer is merged into the request the runtime gets.
#pragma once

#include <string>

#include "koordinator/runtime/v1alpha1/api.pb.h"

namespace koord::roles::runtime_proxy {

namespace hookapi = ::runtime::v1alpha1;

/// `Request` is runtime::v1::RunPodSandboxRequest or runtime::v1alpha2::RunPodSandboxRequest
/// (instantiated for both).
template <typename Request>
hookapi::PodSandboxHookRequest podSandboxHookRequest(const Request& run);

/// Labels and annotations are merged (the answer's win), a non-empty cgroup parent replaces.
template <typename Request>
void mergePodSandboxHookResponse(const hookapi::PodSandboxHookResponse& answer, Request& run);

/// `Request` is a CreateContainerRequest of either version.
template <typename Request>
hookapi::ContainerResourceHookRequest containerHookRequest(const Request& create);

/// Annotations and environment merged (the answer's win), resources set where the answer sets
/// them, a non-empty pod cgroup parent replaces the sandbox config's; the answer's devices and
/// mounts appended (not over one the kubelet put at the same container path).
template <typename Request>
void mergeContainerHookResponse(const hookapi::ContainerResourceHookResponse& answer,
                                Request& create);

/// The resources a hook answered, applied to CRI resources of either version: fields the
/// answer leaves zero (or empty) keep the request's value, a cpu_quota of -1 (unlimited)
/// counts, and cgroup v2 `unified` entries merge where the version has them.
template <typename CriResources>
void applyHookResources(const hookapi::LinuxContainerResources& answer, CriResources& resources);

template <typename CriResources>
hookapi::LinuxContainerResources hookResources(const CriResources& resources);

}  // namespace koord::roles::runtime_proxy
