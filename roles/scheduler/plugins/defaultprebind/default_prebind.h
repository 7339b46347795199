// DefaultPreBind: Koordinator's PreBind plugin that sends the pod changes the other plugins
// made during the cycle (reservation-allocated, ...) as one patch before the binding.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "framework/framework_handle.h"
#include "framework/plugin.h"

namespace koord::roles::scheduler::defaultprebind {

inline constexpr std::string_view kPluginName = "DefaultPreBind";

class DefaultPreBind final : public PreBindPlugin {
 public:
  explicit DefaultPreBind(const FrameworkHandle& handle) : handle_(handle) {}
  std::string_view name() const override { return kPluginName; }
  void preBind(std::shared_ptr<CycleState> state, std::shared_ptr<const PodInfo> pod,
               const std::string& node, StatusCallback done) override;

 private:
  const FrameworkHandle& handle_;
};

}  // namespace koord::roles::scheduler::defaultprebind
