#include "runtimehooks/cpuset/cpuset_hook.h"

#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include "koord/core/log.h"
#include "koordinator/runtime/v1alpha1/api.pb.h"
#include "runtimehooks/cpuset/cpuset_allocator.h"
#include "runtimehooks/cpuset/cpuset_reconcile.h"
#include "runtimehooks/cpuset/cpuset_rule.h"
#include "runtimehooks/cpuset/cpuset_rule_store.h"
#include "statesinformer/states_informer.h"

namespace koord::roles::koordlet {

namespace {

// A bound pod's sandbox: no CFS quota on the pod cgroup either.
void podHook(const PodHookContext& ctx, hookapi::PodSandboxHookResponse& out) {
  const auto& req = ctx.request;
  const kube::Labels labels(req.labels().begin(), req.labels().end());
  const kube::Annotations annotations(req.annotations().begin(), req.annotations().end());
  auto binding = podCPUSetBinding(labels, annotations);
  if (!binding) {
    KOORD_LOG_ERROR("runtime hook CPUSetAllocator: pod {}: {}: {}",
                    podIdentity(req.pod_meta()).key(), kAnnotationResourceStatus,
                    binding.error().message);
  } else if (*binding) {
    out.mutable_resources()->set_cpu_quota(-1);
  }
}

void containerHook(const ContainerHookContext& ctx, hookapi::ContainerResourceHookResponse& out) {
  const auto& req = ctx.request;
  const kube::Labels labels(req.pod_labels().begin(), req.pod_labels().end());
  CPUSetRuleStore& store = cpusetRuleStore();
  const auto rule = store.rule();
  auto plan =
      planContainerCPUSet(rule.get(), labels, ctx.annotations(),
                          kubeQoSOfCgroupParent(req.pod_cgroup_parent()), store.beCPUManager());
  if (!plan) {
    KOORD_LOG_ERROR("runtime hook CPUSetAllocator: pod {}: {}: {}",
                    podIdentity(req.pod_meta()).key(), kAnnotationResourceStatus,
                    plan.error().message);
    return;
  }
  if (plan->cpus.empty() && !plan->unset_cfs_quota)
    return;
  auto& resources = *out.mutable_container_resources();
  if (!plan->cpus.empty())
    resources.set_cpuset_cpus(plan->cpus);
  if (plan->unset_cfs_quota)
    resources.set_cpu_quota(-1);  // wins over BatchResource's quota: bound CPUs, no throttle
  KOORD_VLOG(4, "runtime hook CPUSetAllocator: {}/{}: cpuset {}{}",
             podIdentity(req.pod_meta()).key(), req.container_meta().name(), plan->cpus,
             plan->unset_cfs_quota ? ", no CFS quota" : "");
}

// Reconcile mode: every running pod (and LS host application) at the rule's cpuset each round,
// once the informer has synced. The store is asked first, so a new NodeResourceTopology reaches
// every pod in the same round. An error is logged once until its message changes.
class CPUSetReconciler final : public HookReconciler {
 public:
  explicit CPUSetReconciler(cgroup::ResourceExecutor& cgroups) : cgroups_(cgroups) {}

  void reconcile(const StatesInformer& states) override {
    auto pods = states.pods();
    if (pods == nullptr || !states.hasSynced())
      return;
    CPUSetRuleStore& store = cpusetRuleStore();
    const auto rule = store.rule();
    if (const std::uint64_t generation = store.generation(); generation != applied_) {
      KOORD_VLOG(3, "cpuset: {}, reconciling every pod",
                 rule ? "the node's CPU pools changed" : "no CPU pools known");
      applied_ = generation;
    }
    auto slo = states.nodeSLO();
    std::span<const HostApplication> apps;
    if (slo != nullptr)
      apps = slo->host_applications.apps;
    auto stats = reconcileCPUSets(cgroups_, rule.get(), *pods, apps, store.beCPUManager());
    std::map<std::string, std::string> now;
    for (auto& [what, why] : stats.errors) {
      auto last = errors_.find(what);
      if (last == errors_.end() || last->second != why)
        KOORD_LOG_WARNING("cpuset: {}: {}", what, why);
      now.emplace(std::move(what), std::move(why));
    }
    errors_ = std::move(now);
  }

 private:
  cgroup::ResourceExecutor& cgroups_;
  std::uint64_t applied_ = 0;
  std::map<std::string, std::string> errors_;  // what -> the error logged last
};

}  // namespace

RuntimeHook cpusetHook() {
  return {
      .name = "CPUSetAllocator",
      .gate = "CPUSetAllocator",
      .description =
          "cpusets from the scheduler's CPU binding (LSE, LSR, without a CFS quota) or "
          "from the node's CPU pools",
      .stages = {HookStage::kPreRunPodSandbox, HookStage::kPreCreateContainer,
                 HookStage::kPreUpdateContainerResources},
      .pod_hook = podHook,
      .container_hook = containerHook,
      .reconcile =
          HookReconcile{
              .task_name = "cpuset",
              .level = ReconcileLevel::kPod,
              .make = makeReconciler<CPUSetReconciler>,
          },
  };
}

}  // namespace koord::roles::koordlet
