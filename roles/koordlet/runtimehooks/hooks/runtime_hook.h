// A runtime hook as the koordlet registers it (Koordinator's hooks.Register): a name, the feature
// gate that enables it, the stages it answers koord runtime-proxy at, and optionally the
// reconciler that applies the same policy to what already runs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string_view>

#include "koord/kube/labels.h"

namespace runtime::v1alpha1 {
class PodSandboxHookRequest;
class PodSandboxHookResponse;
class ContainerResourceHookRequest;
class ContainerResourceHookResponse;
class PodSandboxMetadata;
}  // namespace runtime::v1alpha1
namespace koord::cgroup {
class ResourceExecutor;
}

namespace koord::roles::koordlet {

namespace hookapi = ::runtime::v1alpha1;
class StatesInformer;
struct PodMeta;

/// The points where koord runtime-proxy asks the koordlet, in the order of Koordinator's hook
/// types (the registration lists them so).
enum class HookStage : std::uint8_t {
  kPreRunPodSandbox,
  kPostStopPodSandbox,
  kPreCreateContainer,
  kPreStartContainer,
  kPostStartContainer,
  kPreUpdateContainerResources,
  kPostStopContainer,
};
inline constexpr std::size_t kHookStageCount = 7;

/// Koordinator's spelling: "PreRunPodSandbox", ...
std::string_view hookStageName(HookStage stage);
/// The pod sandbox stages take PodSandboxHookRequest, the others ContainerResourceHookRequest.
constexpr bool isPodStage(HookStage stage) {
  return stage == HookStage::kPreRunPodSandbox || stage == HookStage::kPostStopPodSandbox;
}

/// The stages one hook serves.
class HookStages {
 public:
  constexpr HookStages() = default;
  constexpr HookStages(std::initializer_list<HookStage> stages) {
    for (auto s : stages)
      bits_ |= bit(s);
  }
  constexpr bool has(HookStage s) const { return (bits_ & bit(s)) != 0; }
  constexpr bool empty() const { return bits_ == 0; }

 private:
  static constexpr std::uint32_t bit(HookStage s) { return 1u << static_cast<unsigned>(s); }
  std::uint32_t bits_ = 0;
};

/// What a pod sandbox hook reads. `cgroups` is null where nothing may be read from the node.
struct PodHookContext {
  const hookapi::PodSandboxHookRequest& request;
  const cgroup::ResourceExecutor* cgroups = nullptr;
};

/// What a container hook reads. The pod's annotations are copied out of the request once, by
/// the first hook that asks, so that hooks which never look at them cost nothing.
class ContainerHookContext {
 public:
  ContainerHookContext(const hookapi::ContainerResourceHookRequest& request,
                       const cgroup::ResourceExecutor* cgroups)
      : request(request), cgroups(cgroups) {}
  const kube::Annotations& annotations() const;

  const hookapi::ContainerResourceHookRequest& request;
  const cgroup::ResourceExecutor* cgroups;

 private:
  mutable std::optional<kube::Annotations> annotations_;
};

/// A hook fills in what it changes in the response; a later hook may override an earlier one
/// (hooks run in registration order). A hook never fails a pod: bad input is logged and skipped.
using PodHookFn = void (*)(const PodHookContext&, hookapi::PodSandboxHookResponse&);
using ContainerHookFn = void (*)(const ContainerHookContext&,
                                 hookapi::ContainerResourceHookResponse&);

/// The pod as a hook's log lines name it: namespace, name and UID from the request.
PodMeta podIdentity(const hookapi::PodSandboxMetadata& meta);

/// A hook's policy applied to running pods or the QoS tiers, for pods created before the
/// koordlet (or while its hook server was down) and values the kubelet resets.
class HookReconciler {
 public:
  virtual ~HookReconciler() = default;
  virtual void reconcile(const StatesInformer& states) = 0;
};

/// Pod-level reconcilers also run after each change to the node's pods; QoS-level ones only on
/// the interval (the tiers do not change with pods).
enum class ReconcileLevel : std::uint8_t { kPod, kKubeQOS };

/// HookReconcile::make for a reconciler constructed from the cgroups it writes.
template <typename Reconciler>
std::unique_ptr<HookReconciler> makeReconciler(cgroup::ResourceExecutor& cgroups) {
  return std::make_unique<Reconciler>(cgroups);
}

struct HookReconcile {
  /// The loop's name in log lines ("batch resource").
  std::string_view task_name{};
  ReconcileLevel level = ReconcileLevel::kPod;
  std::unique_ptr<HookReconciler> (*make)(cgroup::ResourceExecutor& cgroups) = nullptr;
};

struct RuntimeHook {
  std::string_view name{};
  /// The koordlet feature gate that turns it on.
  std::string_view gate{};
  std::string_view description{};
  HookStages stages{};
  /// Called at the pod sandbox stages in `stages`.
  PodHookFn pod_hook = nullptr;
  /// Called at the container stages in `stages`.
  ContainerHookFn container_hook = nullptr;
  std::optional<HookReconcile> reconcile{};
};

}  // namespace koord::roles::koordlet
