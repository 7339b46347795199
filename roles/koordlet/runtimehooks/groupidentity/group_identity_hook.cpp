#include "runtimehooks/groupidentity/group_identity_hook.h"

#include <string>
#include <utility>

#include <fmt/format.h>

#include "koord/apis/extension.h"
#include "koord/cgroup/kubepods_path.h"
#include "koord/cgroup/resource_executor.h"
#include "koord/core/log.h"
#include "koordinator/runtime/v1alpha1/api.pb.h"
#include "runtimehooks/cpuset/cpuset_rule.h"
#include "runtimehooks/groupidentity/bvt_apply.h"
#include "statesinformer/pod_meta.h"
#include "statesinformer/states_informer.h"

namespace koord::roles::koordlet {

GroupIdentityState::View GroupIdentityState::view() const {
  std::lock_guard lock(mu_);
  return view_;
}

void GroupIdentityState::set(std::shared_ptr<const BvtRule> rule, bool write_cgroups) {
  std::lock_guard lock(mu_);
  view_ = View{std::move(rule), write_cgroups};
}

void GroupIdentityState::setProcRoot(std::filesystem::path proc_root) {
  std::lock_guard lock(mu_);
  proc_root_ = std::move(proc_root);
}

std::filesystem::path GroupIdentityState::procRoot() const {
  std::lock_guard lock(mu_);
  return proc_root_;
}

GroupIdentityState& groupIdentityState() {
  static GroupIdentityState state;
  return state;
}

namespace {

// Koordinator writes the pod's value straight to its cgroup here (runtime-proxy's answer has no
// field for it); the kubelet has created the pod cgroup before it asks for the sandbox.
void podHook(const PodHookContext& ctx, hookapi::PodSandboxHookResponse&) {
  auto state = groupIdentityState().view();
  if (state.rule == nullptr || !state.write_cgroups || ctx.cgroups == nullptr)
    return;
  const auto& req = ctx.request;
  const std::string key = podIdentity(req.pod_meta()).key();
  auto dir = cgroup::cgroupParentDir(ctx.cgroups->root().driver, req.cgroup_parent());
  if (!dir) {
    KOORD_LOG_ERROR("runtime hook GroupIdentity: pod {}: {}", key, dir.error().message);
    return;
  }
  apis::QoSClass qos = apis::QoSClass::kNone;
  if (auto it = req.labels().find(std::string(apis::kLabelPodQoS)); it != req.labels().end())
    qos = apis::qosClassByName(it->second);
  const std::int64_t value = state.rule->podValue(qos, kubeQoSOfCgroupParent(req.cgroup_parent()));
  // A copy shares the executor's record of refused writes; the hook context only reads.
  cgroup::ResourceExecutor writer = *ctx.cgroups;
  if (!writer.exists(*dir, cgroup::Resource::kCpuBvtWarpNs)) {
    KOORD_VLOG(4, "runtime hook GroupIdentity: pod {}: no cgroup {} yet; the reconciler sets it",
               key, *dir);
    return;
  }
  auto r = writer.write(*dir, cgroup::Resource::kCpuBvtWarpNs, std::to_string(value));
  if (!r && !cgroup::isRefusedWrite(r.error()))
    KOORD_LOG_ERROR("runtime hook GroupIdentity: pod {}: {}", key, r.error().message);
  else if (r)
    KOORD_VLOG(4, "runtime hook GroupIdentity: pod {}: cpu.bvt_warp_ns {}", key, value);
}

// Acts once synced with a NodeSLO; a NodeSLO this koordlet cannot read leaves the last rule in
// place. Each distinct problem is logged once until it changes, not every round.
class GroupIdentityReconciler final : public HookReconciler {
 public:
  explicit GroupIdentityReconciler(cgroup::ResourceExecutor& cgroups) : cgroups_(cgroups) {}

  void reconcile(const StatesInformer& states) override {
    auto snapshot = states.snapshot();
    if (!snapshot.synced || snapshot.node_slo == nullptr)
      return;
    report(round(snapshot));
  }

 private:
  std::string round(const StatesSnapshot& snapshot) {
    GroupIdentityState& state = groupIdentityState();
    if (auto missing = groupIdentityMissingInterface(cgroups_); !missing.empty()) {
      state.set(nullptr, false);
      return fmt::format("{} is missing (not an Anolis kernel?); nothing written", missing);
    }
    auto rule = decodeBvtRule(snapshot.node_slo->resource_qos_strategy.get());
    if (!rule)
      return fmt::format("NodeSLO {}: {}; rule unchanged", snapshot.node_slo->name,
                         rule.error().message);
    if (!*rule)
      return "";
    auto shared = std::make_shared<const BvtRule>(**rule);
    auto active = prepareGroupIdentitySysctl(state.procRoot(), shared->enable);
    if (!active) {
      state.set(shared, false);
      return fmt::format("{}; cgroups not written", active.error().message);
    }
    state.set(shared, *active);
    if (!*active)
      return "";
    static const std::vector<PodMeta> kNoPods;
    auto stats =
        applyBvtRule(cgroups_, *shared, snapshot.pods != nullptr ? *snapshot.pods : kNoPods,
                     &snapshot.node_slo->host_applications);
    return stats.errors.empty() ? std::string() : stats.errors.front();
  }

  void report(std::string problem) {
    if (!problem.empty() && problem != last_problem_)
      KOORD_LOG_WARNING("group identity: {}", problem);
    last_problem_ = std::move(problem);
  }

  cgroup::ResourceExecutor& cgroups_;
  std::string last_problem_;
};

}  // namespace

RuntimeHook groupIdentityHook() {
  return {
      .name = "GroupIdentity",
      .gate = "GroupIdentity",
      .description = "set bvt value by priority and qos class",
      .stages = {HookStage::kPreRunPodSandbox},
      .pod_hook = podHook,
      .reconcile =
          HookReconcile{
              .task_name = "group identity",
              .level = ReconcileLevel::kPod,
              .make = makeReconciler<GroupIdentityReconciler>,
          },
  };
}

}  // namespace koord::roles::koordlet
