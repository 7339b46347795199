#include "runtimehooks/batchresource/batch_resource_hook.h"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "koord/apis/extended_resource_spec.h"
#include "koord/apis/extension.h"
#include "koord/cgroup/cfs_quota_tree.h"
#include "koord/cgroup/cgroup_reader.h"
#include "koord/cgroup/cgroup_resource.h"
#include "koord/cgroup/kubepods_path.h"
#include "koord/cgroup/resource_executor.h"
#include "koord/core/log.h"
#include "koordinator/runtime/v1alpha1/api.pb.h"
#include "runtimehooks/batchresource/batch_resource.h"
#include "statesinformer/states_informer.h"

namespace koord::roles::koordlet {

namespace {

using ProtoMap = google::protobuf::Map<std::string, std::string>;

// The pod as far as BatchResource needs it: its labels and the containers' batch resources.
std::optional<BatchResourcePlan> planFor(PodMeta& pod, const ProtoMap& labels,
                                         const ProtoMap& annotations) {
  for (const auto& [k, v] : labels)
    pod.labels[k] = v;
  if (apis::podQoSClassRaw(pod.labels) != apis::QoSClass::kBE)
    return std::nullopt;
  auto spec = annotations.find(std::string(apis::kAnnotationExtendedResourceSpec));
  if (spec == annotations.end())
    return std::nullopt;
  auto containers = apis::parseExtendedResourceSpec(spec->second);
  if (!containers) {
    KOORD_LOG_ERROR("runtime hook BatchResource: pod {}: {}: {}", pod.key(),
                    apis::kAnnotationExtendedResourceSpec, containers.error().message);
    return std::nullopt;
  }
  for (auto& [name, resources] : *containers) {
    ContainerMeta c;
    c.name = name;
    c.requests = std::move(resources.requests);
    c.limits = std::move(resources.limits);
    pod.containers.push_back(std::move(c));
  }
  return planBatchResource(pod);
}

void setValues(const CgroupValues& v, hookapi::LinuxContainerResources& out) {
  out.set_cpu_shares(v.cpu_shares);
  out.set_cpu_quota(v.cfs_quota);
  if (v.cfs_quota > 0)
    out.set_cpu_period(100000);
  if (v.memory_limit > 0)
    out.set_memory_limit_in_bytes(v.memory_limit);
}

// The container's quota within its pod cgroup's current one: cgroup v1 refuses more (the
// container would not start), and CPU suppression may hold the pod below its own limit. Without
// the cgroups to read, the plan's quota as it is.
std::int64_t quotaWithinPod(const cgroup::ResourceExecutor* cgroups,
                            const hookapi::ContainerResourceHookRequest& req, std::int64_t quota) {
  if (cgroups == nullptr || quota <= 0)
    return quota;
  auto dir = cgroup::cgroupParentDir(cgroups->root().driver, req.pod_cgroup_parent());
  if (!dir)
    return quota;
  auto pod_quota = cgroup::readInt64(*cgroups, *dir, cgroup::Resource::kCpuCfsQuota);
  return pod_quota ? cgroup::quotaWithin(quota, *pod_quota) : quota;
}

void podHook(const PodHookContext& ctx, hookapi::PodSandboxHookResponse& out) {
  PodMeta pod = podIdentity(ctx.request.pod_meta());
  if (auto plan = planFor(pod, ctx.request.labels(), ctx.request.annotations()))
    setValues(plan->pod, *out.mutable_resources());
}

void containerHook(const ContainerHookContext& ctx, hookapi::ContainerResourceHookResponse& out) {
  const auto& req = ctx.request;
  PodMeta pod = podIdentity(req.pod_meta());
  auto plan = planFor(pod, req.pod_labels(), req.pod_annotations());
  if (!plan)
    return;
  for (std::size_t i = 0; i < pod.containers.size(); ++i) {
    if (pod.containers[i].name == req.container_meta().name()) {
      auto& values = plan->containers[i];
      values.cfs_quota = quotaWithinPod(ctx.cgroups, req, values.cfs_quota);
      setValues(values, *out.mutable_container_resources());
      KOORD_VLOG(4, "runtime hook BatchResource: {}/{}: cpu.shares {} cfs_quota {} memory {}",
                 pod.key(), req.container_meta().name(), plan->containers[i].cpu_shares,
                 plan->containers[i].cfs_quota, plan->containers[i].memory_limit);
      break;
    }
  }
}

// Reconcile mode: every running pod's plan written to its cgroups, once the informer has synced
// (before that its pod list may miss pods the kubelet runs). A failing write is logged once until
// its message changes, not every round.
class BatchResourceReconciler final : public HookReconciler {
 public:
  explicit BatchResourceReconciler(cgroup::ResourceExecutor& cgroups) : cgroups_(cgroups) {}

  void reconcile(const StatesInformer& states) override {
    auto pods = states.pods();
    if (pods == nullptr || !states.hasSynced())
      return;
    for (const auto& pod : *pods) {
      if (!pod.isRunning())
        continue;
      auto plan = planBatchResource(pod);
      if (!plan)
        continue;
      auto stats = applyBatchResource(cgroups_, pod, *plan);
      auto& last = errors_[pod.uid];
      auto now_error = stats.errors.empty() ? std::string() : stats.errors.front();
      if (!now_error.empty() && now_error != last)
        KOORD_LOG_WARNING("batch resource: pod {}: {}", pod.key(), now_error);
      last = now_error;
    }
  }

 private:
  cgroup::ResourceExecutor& cgroups_;
  std::map<std::string, std::string> errors_;  // pod uid -> last error logged
};

}  // namespace

RuntimeHook batchResourceHook() {
  return {
      .name = "BatchResource",
      .gate = "BatchResource",
      .description = "a BE pod's batch resources as its cgroups' shares, quota and memory limit",
      .stages = {HookStage::kPreRunPodSandbox, HookStage::kPreCreateContainer,
                 HookStage::kPreUpdateContainerResources},
      .pod_hook = podHook,
      .container_hook = containerHook,
      .reconcile =
          HookReconcile{
              .task_name = "batch resource",
              .level = ReconcileLevel::kPod,
              .make = makeReconciler<BatchResourceReconciler>,
          },
  };
}

}  // namespace koord::roles::koordlet
