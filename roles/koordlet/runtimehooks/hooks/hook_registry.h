// The runtime hooks one koordlet runs, indexed by stage: the hook server dispatches a request to
// the hooks registered for its stage, the reconciler runs the same hooks' reconcile parts.
#pragma once

#include <array>
#include <deque>
#include <span>
#include <vector>

#include "koord/core/expected.h"
#include "runtimehooks/hooks/runtime_hook.h"

namespace koord {
class FeatureGate;
}

namespace koord::roles::koordlet {

class HookRegistry {
 public:
  HookRegistry() = default;
  // The stage index points into hooks_.
  HookRegistry(const HookRegistry&) = delete;
  HookRegistry& operator=(const HookRegistry&) = delete;
  HookRegistry(HookRegistry&&) = default;
  HookRegistry& operator=(HookRegistry&&) = default;

  /// Refuses a name registered already, and a hook without the function its stages call.
  Expected<void> add(const RuntimeHook& hook);

  /// The hooks registered for `stage`, in registration order.
  std::span<const RuntimeHook* const> at(HookStage stage) const {
    return by_stage_[static_cast<std::size_t>(stage)];
  }
  /// Every hook, in registration order.
  const std::deque<RuntimeHook>& hooks() const { return hooks_; }
  /// Whether any hook answers runtime-proxy (a hook may only reconcile).
  bool servesAnyStage() const;

 private:
  std::deque<RuntimeHook> hooks_;
  std::array<std::vector<const RuntimeHook*>, kHookStageCount> by_stage_;
};

/// The hooks of `table` whose gates are on, in table order. Throws std::logic_error when the
/// table repeats a name: that is a koord bug.
HookRegistry enabledHooks(std::span<const RuntimeHook> table, const FeatureGate& gates);

}  // namespace koord::roles::koordlet
