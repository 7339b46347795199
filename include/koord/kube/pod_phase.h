// A pod's status.phase read into a role's own PodPhase enum: each role keeps the enum its
// projection needs, all of them naming the five phases Kubernetes defines alike.
#pragma once

#include <optional>
#include <string_view>

#include "koord/kube/error.h"

namespace koord::kube {

/// The phase `name` spells, in any enum with kPending, kRunning, kSucceeded, kFailed and
/// kUnknown; nullopt for anything else (the empty string included, which callers read apart).
template <typename Phase>
constexpr std::optional<Phase> podPhaseNamed(std::string_view name) {
  if (name == "Pending")
    return Phase::kPending;
  if (name == "Running")
    return Phase::kRunning;
  if (name == "Succeeded")
    return Phase::kSucceeded;
  if (name == "Failed")
    return Phase::kFailed;
  if (name == "Unknown")
    return Phase::kUnknown;
  return std::nullopt;
}

/// "status.phase: unsupported value ...", listing the supported ones.
Error unsupportedPodPhase(std::string_view name);

/// status.phase as the API server stores it: unset is Pending (a pod not yet seen by a kubelet);
/// a value Kubernetes does not define is an error.
template <typename Phase>
Expected<Phase> decodePodPhase(std::string_view name) {
  if (name.empty())
    return Phase::kPending;
  if (auto phase = podPhaseNamed<Phase>(name))
    return *phase;
  return unsupportedPodPhase(name);
}

}  // namespace koord::kube
