// The koordlet's runtime hooks module (Koordinator's runtimehooks): the hooks whose gates are on,
// answered to koord runtime-proxy by the hook server and applied to running pods by their
// reconcilers, both from one registration.
#pragma once

#include <memory>
#include <span>
#include <string_view>

#include "runtimehooks/hook_table.h"

namespace boost::asio {
class io_context;
}
namespace koord {
class FeatureGate;
}

namespace koord::roles::koordlet {

struct KoordletOptions;
class HookRegistry;

class RuntimeHooks {
 public:
  /// Registers the hooks of `table` whose gates are on and makes their reconcilers, one loop
  /// each every -runtime-hooks-reconcile-interval (pod-level ones also on pod changes).
  RuntimeHooks(boost::asio::io_context& io, StatesInformer& states,
               cgroup::ResourceExecutor& cgroups, const FeatureGate& gates,
               const KoordletOptions& options,
               std::span<const RuntimeHook> table = koordletRuntimeHooks());
  ~RuntimeHooks();
  RuntimeHooks(const RuntimeHooks&) = delete;
  RuntimeHooks& operator=(const RuntimeHooks&) = delete;

  /// Starts the hook server for runtime-proxy where some hook answers a stage. A server that
  /// cannot start (its socket's directory missing, say) is logged and left out: the reconcilers
  /// still apply the same values, a little later.
  void serve();
  /// Starts the reconcile loops, in table order.
  void start();
  void stop();
  /// Runs the reconciler of the hook named `hook_name` once, now, on the calling thread (the io
  /// thread, as the loops do): for a policy whose inputs just changed. Nothing when that hook is
  /// off or does not reconcile.
  void reconcileNow(std::string_view hook_name);

  const HookRegistry& registry() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace koord::roles::koordlet
