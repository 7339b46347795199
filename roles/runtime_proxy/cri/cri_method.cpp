#include "cri/cri_method.h"

#include <algorithm>
#include <iterator>

namespace koord::roles::runtime_proxy {

namespace {

// Every unary rpc of runtime.v1 (a superset of runtime.v1alpha2's), sorted for binary search.
constexpr std::string_view kUnaryRuntime[] = {
    "Attach",
    "CheckpointContainer",
    "CheckpointPod",
    "ContainerStats",
    "ContainerStatus",
    "CreateContainer",
    "Exec",
    "ExecSync",
    "ListContainerStats",
    "ListContainers",
    "ListMetricDescriptors",
    "ListPodSandbox",
    "ListPodSandboxMetrics",
    "ListPodSandboxStats",
    "PodSandboxStats",
    "PodSandboxStatus",
    "PortForward",
    "RemoveContainer",
    "RemovePodSandbox",
    "ReopenContainerLog",
    "RestorePod",
    "RunPodSandbox",
    "RuntimeConfig",
    "StartContainer",
    "Status",
    "StopContainer",
    "StopPodSandbox",
    "UpdateContainerResources",
    "UpdatePodSandboxResources",
    "UpdateRuntimeConfig",
    "Version",
};
constexpr std::string_view kUnaryImage[] = {
    "ImageFsInfo", "ImageStatus", "ListImages", "PullImage", "RemoveImage",
};
static_assert(std::is_sorted(std::begin(kUnaryRuntime), std::end(kUnaryRuntime)));
static_assert(std::is_sorted(std::begin(kUnaryImage), std::end(kUnaryImage)));

template <std::size_t N>
bool contains(const std::string_view (&sorted)[N], std::string_view name) {
  return std::binary_search(std::begin(sorted), std::end(sorted), name);
}

HookedCall hookedOf(std::string_view name) {
  if (name == "RunPodSandbox")
    return HookedCall::kRunPodSandbox;
  if (name == "StopPodSandbox")
    return HookedCall::kStopPodSandbox;
  if (name == "CreateContainer")
    return HookedCall::kCreateContainer;
  if (name == "StartContainer")
    return HookedCall::kStartContainer;
  if (name == "StopContainer")
    return HookedCall::kStopContainer;
  if (name == "UpdateContainerResources")
    return HookedCall::kUpdateContainerResources;
  if (name == "RemoveContainer")
    return HookedCall::kRemoveContainer;
  if (name == "RemovePodSandbox")
    return HookedCall::kRemovePodSandbox;
  return HookedCall::kNone;
}

}  // namespace

CriMethod classifyCriMethod(std::string_view full) {
  CriMethod m;
  if (full.size() < 2 || full.front() != '/')
    return m;
  const std::size_t slash = full.find('/', 1);
  if (slash == std::string_view::npos)
    return m;
  const std::string_view service = full.substr(1, slash - 1);
  const std::string_view name = full.substr(slash + 1);
  std::string_view bare;
  if (service.starts_with("runtime.v1alpha2.")) {
    m.version = CriVersion::kV1alpha2;
    bare = service.substr(17);
  } else if (service.starts_with("runtime.v1.")) {
    m.version = CriVersion::kV1;
    bare = service.substr(11);
  } else {
    return m;
  }
  if (bare == "RuntimeService") {
    m.service = CriService::kRuntime;
    m.unary = contains(kUnaryRuntime, name);
    m.hooked = hookedOf(name);
  } else if (bare == "ImageService") {
    m.service = CriService::kImage;
    m.unary = contains(kUnaryImage, name);
  } else {
    m.version = CriVersion::kOther;
  }
  return m;
}

std::string_view hookedCallName(HookedCall call) {
  switch (call) {
    case HookedCall::kNone:
      return "none";
    case HookedCall::kRunPodSandbox:
      return "RunPodSandbox";
    case HookedCall::kStopPodSandbox:
      return "StopPodSandbox";
    case HookedCall::kCreateContainer:
      return "CreateContainer";
    case HookedCall::kStartContainer:
      return "StartContainer";
    case HookedCall::kStopContainer:
      return "StopContainer";
    case HookedCall::kUpdateContainerResources:
      return "UpdateContainerResources";
    case HookedCall::kRemoveContainer:
      return "RemoveContainer";
    case HookedCall::kRemovePodSandbox:
      return "RemovePodSandbox";
  }
  return "none";
}

}  // namespace koord::roles::runtime_proxy
