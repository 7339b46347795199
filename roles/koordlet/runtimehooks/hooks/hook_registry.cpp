#include "runtimehooks/hooks/hook_registry.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "koord/core/feature_gate.h"

namespace koord::roles::koordlet {

Expected<void> HookRegistry::add(const RuntimeHook& hook) {
  const bool taken = std::any_of(hooks_.begin(), hooks_.end(),
                                 [&](const RuntimeHook& h) { return h.name == hook.name; });
  if (taken)
    return invalidArgument(fmt::format("runtime hook {} is registered already", hook.name));
  for (std::size_t i = 0; i < kHookStageCount; ++i) {
    const auto stage = static_cast<HookStage>(i);
    if (!hook.stages.has(stage))
      continue;
    const bool callable =
        isPodStage(stage) ? hook.pod_hook != nullptr : hook.container_hook != nullptr;
    if (!callable)
      return invalidArgument(fmt::format("runtime hook {} serves {} without a function for it",
                                         hook.name, hookStageName(stage)));
  }
  const RuntimeHook& stored = hooks_.emplace_back(hook);
  for (std::size_t i = 0; i < kHookStageCount; ++i) {
    if (stored.stages.has(static_cast<HookStage>(i)))
      by_stage_[i].push_back(&stored);
  }
  return {};
}

bool HookRegistry::servesAnyStage() const {
  return std::any_of(hooks_.begin(), hooks_.end(),
                     [](const RuntimeHook& h) { return !h.stages.empty(); });
}

HookRegistry enabledHooks(std::span<const RuntimeHook> table, const FeatureGate& gates) {
  HookRegistry registry;
  for (const auto& hook : table) {
    if (!gates.enabled(hook.gate))
      continue;
    if (auto added = registry.add(hook); !added)
      throw std::logic_error(added.error().message);
  }
  return registry;
}

}  // namespace koord::roles::koordlet
