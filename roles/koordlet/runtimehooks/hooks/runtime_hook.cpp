#include "runtimehooks/hooks/runtime_hook.h"

#include <array>

#include "koordinator/runtime/v1alpha1/api.pb.h"
#include "statesinformer/pod_meta.h"

namespace koord::roles::koordlet {

std::string_view hookStageName(HookStage stage) {
  static constexpr std::array<std::string_view, kHookStageCount> kNames = {
      "PreRunPodSandbox",  "PostStopPodSandbox", "PreCreateContainer",
      "PreStartContainer", "PostStartContainer", "PreUpdateContainerResources",
      "PostStopContainer",
  };
  return kNames[static_cast<std::size_t>(stage)];
}

const kube::Annotations& ContainerHookContext::annotations() const {
  if (!annotations_)
    annotations_.emplace(request.pod_annotations().begin(), request.pod_annotations().end());
  return *annotations_;
}

PodMeta podIdentity(const hookapi::PodSandboxMetadata& meta) {
  PodMeta pod;
  pod.namespace_ = meta.namespace_();
  pod.name = meta.name();
  pod.uid = meta.uid();
  return pod;
}

}  // namespace koord::roles::koordlet
