// One hook server's registration, as a file in /etc/runtime/hookserver.d/ declares it
// (Koordinator's format: remote-endpoint, failure-policy, runtime-hooks), checked strictly.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "cri/cri_method.h"
#include "koord/kube/error.h"

namespace koord::roles::runtime_proxy {

/// Koordinator's RuntimeHookType values.
enum class RuntimeHookType {
  kPreRunPodSandbox,
  kPostStopPodSandbox,
  kPreCreateContainer,
  kPreStartContainer,
  kPostStartContainer,
  kPreUpdateContainerResources,
  kPostStopContainer,
  /// Declared by Koordinator but called on no CRI call; accepted and never dispatched.
  kPreRemoveRunPodSandbox,
};

/// Koordinator treats an absent policy as "not Fail": the call goes on without the hook.
enum class FailurePolicy { kIgnore, kFail };

struct HookServerConfig {
  /// The unix socket path the hook server listens on.
  std::string remote_endpoint;
  FailurePolicy failure_policy = FailurePolicy::kIgnore;
  std::vector<RuntimeHookType> hooks;
};

/// `json` is one file's content; errors name the field. Unknown keys, hook types and policies,
/// and an endpoint that is not an absolute unix socket path are errors.
kube::Expected<HookServerConfig> parseHookServerConfig(std::string_view json);

std::string_view toString(RuntimeHookType type);
/// Whether `type` runs before (pre) the CRI call or after it, and on which call.
bool isPreHook(RuntimeHookType type);
HookedCall hookedCallOf(RuntimeHookType type);

}  // namespace koord::roles::runtime_proxy
