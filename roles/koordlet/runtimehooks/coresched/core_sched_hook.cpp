#include "runtimehooks/coresched/core_sched_hook.h"

#include <memory>
#include <string>

#include "koord/core/log.h"
#include "runtimehooks/coresched/kube_qos_cpu_idle.h"
#include "statesinformer/states_informer.h"

namespace koord::roles::koordlet {

namespace {

// Only once synced, and a NodeSLO this koordlet cannot read leaves the last values in place. A
// failure is logged once until its message changes, not every round.
class KubeQOSCPUIdleReconciler final : public HookReconciler {
 public:
  explicit KubeQOSCPUIdleReconciler(cgroup::ResourceExecutor& cgroups) : cgroups_(cgroups) {}

  void reconcile(const StatesInformer& states) override {
    auto snapshot = states.snapshot();
    if (!snapshot.synced || snapshot.node_slo == nullptr)
      return;
    auto rule = decodeKubeQOSCPUIdle(snapshot.node_slo->resource_qos_strategy.get());
    std::string now_error;
    if (!rule) {
      now_error = "NodeSLO " + snapshot.node_slo->name + ": " + rule.error().message;
    } else if (*rule) {
      auto stats = applyKubeQOSCPUIdle(cgroups_, **rule);
      if (stats.unsupported)
        now_error = "the kernel has no cpu.idle (Linux 5.15+); nothing written";
      else if (!stats.errors.empty())
        now_error = stats.errors.front();
    }
    if (!now_error.empty() && now_error != last_error_)
      KOORD_LOG_WARNING("core sched: {}", now_error);
    last_error_ = now_error;
  }

 private:
  cgroup::ResourceExecutor& cgroups_;
  std::string last_error_;
};

}  // namespace

RuntimeHook coreSchedHook() {
  return {
      .name = "CoreSched",
      .gate = "CoreSched",
      .description = "cpu.idle on the QoS tiers from the NodeSLO's resourceQOSStrategy",
      .reconcile =
          HookReconcile{
              .task_name = "core sched cpu.idle",
              .level = ReconcileLevel::kKubeQOS,
              .make = makeReconciler<KubeQOSCPUIdleReconciler>,
          },
  };
}

}  // namespace koord::roles::koordlet
