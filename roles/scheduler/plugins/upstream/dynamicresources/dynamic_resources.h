// DynamicResources, as far as koord goes: it allocates no ResourceClaims, so a pod that has
// spec.resourceClaims is refused with that reason instead of being placed without its devices.
#pragma once

#include <string_view>

#include "framework/plugin.h"

namespace koord::roles::scheduler::upstream {

inline constexpr std::string_view kDynamicResourcesName = "DynamicResources";

class DynamicResources final : public PreFilterPlugin {
 public:
  std::string_view name() const override { return kDynamicResourcesName; }
  /// Skip for a pod without claims (every Filter of the cycle leaves this plugin out);
  /// UnschedulableAndUnresolvable for one with claims.
  Status preFilter(CycleState& state, const PodInfo& pod) override;
};

}  // namespace koord::roles::scheduler::upstream
