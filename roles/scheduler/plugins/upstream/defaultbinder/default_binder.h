// DefaultBinder: kube-scheduler's Bind plugin, a POST to pods/{name}/binding made through the
// ClusterView, answering asynchronously so the scheduling thread never waits on the API.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "framework/plugin.h"

namespace koord::roles::scheduler {
class FrameworkHandle;
}

namespace koord::roles::scheduler::upstream {

inline constexpr std::string_view kDefaultBinderName = "DefaultBinder";

class DefaultBinder final : public BindPlugin {
 public:
  explicit DefaultBinder(const FrameworkHandle& handle) : handle_(handle) {}
  std::string_view name() const override { return kDefaultBinderName; }
  void bind(std::shared_ptr<CycleState> state, std::shared_ptr<const PodInfo> pod,
            const std::string& node, StatusCallback done) override;

 private:
  const FrameworkHandle& handle_;
};

}  // namespace koord::roles::scheduler::upstream
