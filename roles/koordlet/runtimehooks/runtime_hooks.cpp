#include "runtimehooks/runtime_hooks.h"

#include <exception>
#include <string>
#include <utility>
#include <vector>

#include "koord/core/log.h"
#include "koordlet_options.h"
#include "periodic_task.h"
#include "runtimehooks/hooks/hook_registry.h"
#include "runtimehooks/hookserver/hook_server.h"
#include "statesinformer/states_informer.h"

namespace koord::roles::koordlet {

struct RuntimeHooks::Impl {
  HookRegistry registry;
  std::vector<std::unique_ptr<HookReconciler>> reconcilers;
  std::vector<std::pair<std::string_view, HookReconciler*>> reconcilers_by_hook;
  StatesInformer* states = nullptr;
  // After the reconcilers they call.
  std::vector<std::unique_ptr<PeriodicTask>> tasks;
  HookServerOptions server_options;
  std::unique_ptr<HookServer> server;
};

RuntimeHooks::RuntimeHooks(boost::asio::io_context& io, StatesInformer& states,
                           cgroup::ResourceExecutor& cgroups, const FeatureGate& gates,
                           const KoordletOptions& o, std::span<const RuntimeHook> table)
    : impl_(std::make_unique<Impl>()) {
  impl_->registry = enabledHooks(table, gates);
  impl_->states = &states;
  for (const RuntimeHook& hook : impl_->registry.hooks()) {
    if (!hook.reconcile)
      continue;
    HookReconciler* reconciler =
        impl_->reconcilers.emplace_back(hook.reconcile->make(cgroups)).get();
    impl_->reconcilers_by_hook.emplace_back(hook.name, reconciler);
    impl_->tasks.push_back(std::make_unique<PeriodicTask>(
        io, std::string(hook.reconcile->task_name), o.runtime_hooks_reconcile_interval,
        [reconciler, &states] { reconciler->reconcile(states); }));
    if (hook.reconcile->level == ReconcileLevel::kPod)
      states.onPodsChanged([reconciler, &states] { reconciler->reconcile(states); });
  }
  impl_->server_options = HookServerOptions{
      .addr = o.runtime_hooks_addr,
      .host_endpoint = o.runtime_hooks_host_endpoint,
      .failure_policy = o.runtime_hooks_failure_policy,
      .config_path = o.runtime_hooks_config_path,
      .disable_stages = o.runtime_hooks_disable_stages,
      .hooks = &impl_->registry,
      .cgroups = &cgroups,
  };
}

RuntimeHooks::~RuntimeHooks() = default;

void RuntimeHooks::serve() {
  if (!impl_->registry.servesAnyStage())
    return;
  impl_->server = std::make_unique<HookServer>(impl_->server_options);
  try {
    impl_->server->start();
  } catch (const std::exception& e) {
    KOORD_LOG_ERROR("runtime hooks: not serving runtime-proxy: {}", e.what());
    impl_->server.reset();
  }
}

void RuntimeHooks::start() {
  for (auto& task : impl_->tasks)
    task->start();
}

void RuntimeHooks::stop() {
  for (auto& task : impl_->tasks)
    task->stop();
}

void RuntimeHooks::reconcileNow(std::string_view hook_name) {
  for (const auto& [name, reconciler] : impl_->reconcilers_by_hook) {
    if (name == hook_name)
      reconciler->reconcile(*impl_->states);
  }
}

const HookRegistry& RuntimeHooks::registry() const {
  return impl_->registry;
}

}  // namespace koord::roles::koordlet
