// What the proxy needs to know of a gRPC method before it reads a byte of the request: which
// backend serves it, which CRI version it is, whether it is unary, and which hook it calls.
#pragma once

#include <string_view>

namespace koord::roles::runtime_proxy {

enum class CriService { kRuntime, kImage, kOther };
enum class CriVersion { kV1, kV1alpha2, kOther };

/// The CRI calls that run Koordinator's runtime hooks (pre, post or both), or that the hooks'
/// bookkeeping follows.
enum class HookedCall {
  kNone,
  kRunPodSandbox,
  kStopPodSandbox,
  kCreateContainer,
  kStartContainer,
  kStopContainer,
  kUpdateContainerResources,
  // No hooks of their own: the proxy forgets what it kept for the removed object.
  kRemoveContainer,
  kRemovePodSandbox,
};

struct CriMethod {
  CriService service = CriService::kOther;
  CriVersion version = CriVersion::kOther;
  HookedCall hooked = HookedCall::kNone;
  /// A method known to be unary; anything else (GetContainerEvents, a method newer than this
  /// table, another service) is forwarded as a stream of messages both ways.
  bool unary = false;
};

/// `full` as gRPC spells it on the wire: "/runtime.v1.RuntimeService/CreateContainer".
CriMethod classifyCriMethod(std::string_view full);

std::string_view hookedCallName(HookedCall call);

}  // namespace koord::roles::runtime_proxy
