// Koordinator's Coscheduling plugin: a gang's members are placed all together or not at all.
// They wait at Permit until min-available are assumed, and fail together when one fails.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <unordered_set>

#include "framework/framework_handle.h"
#include "framework/plugin.h"
#include "framework/plugin_controller.h"
#include "framework/pod_listener.h"
#include "plugins/coscheduling/args.h"
#include "plugins/coscheduling/gang_cache.h"

namespace koord::metrics {
template <typename T>
class Family;
class Gauge;
class Counter;
}  // namespace koord::metrics

namespace koord::roles::scheduler::coscheduling {

/// The ClusterView key of the PodGroup informer the plugin declares.
inline constexpr std::string_view kPodGroupSource = "scheduling.sigs.k8s.io/v1alpha1/podgroups";

class PodGroupController;

class Coscheduling final : public QueueSortPlugin,
                           public PreFilterPlugin,
                           public PostFilterPlugin,
                           public ReservePlugin,
                           public PermitPlugin,
                           public PostBindPlugin,
                           public PodListener,
                           public PluginController {
 public:
  Coscheduling(std::shared_ptr<const CoschedulingArgs> args, FrameworkHandle& handle);
  ~Coscheduling() override;

  std::string_view name() const override { return kPluginName; }
  const CoschedulingArgs& args() const { return *args_; }
  GangCache& gangs() { return gangs_; }

  /// Priority, then the koordinator.sh/priority sub-priority, then the gang order (a group's
  /// members together, groups by the start of their round).
  bool less(const QueuedPodInfo& a, const QueuedPodInfo& b) const override;
  std::shared_ptr<const void> sortHandle(const PodInfo& pod) const override {
    return gangs_.sortHandle(pod);
  }
  Status preFilter(CycleState& state, const PodInfo& pod) override;
  Status postFilter(CycleState& state, const PodInfo& pod, const NodeStatusMap& filtered,
                    PostFilterResult& result) override;
  Status reserve(CycleState& state, const PodInfo& pod, const std::string& node) override;
  void unreserve(CycleState& state, const PodInfo& pod, const std::string& node) override;
  PermitResult permit(CycleState& state, const PodInfo& pod, const std::string& node) override;
  void postBind(CycleState& state, const PodInfo& pod, const std::string& node) override;

  void onPodAdd(const PodInfo& pod) override;
  void onPodUpdate(const PodInfo& old_pod, const PodInfo& pod) override;
  void onPodDelete(const PodInfo& pod) override;

  /// The PodGroup status controller.
  void startController() override;
  void stopController() override;

 private:
  /// Rejects the waiting members of these gangs (from `point`, for the metric).
  void rejectGroup(const GroupRejection& rejection, std::string_view point);
  void activate(const std::vector<std::string>& keys);
  /// A member of a PodGroup's gang changed: the group's status may have.
  void syncPodGroupOf(const PodInfo& pod);
  void updateWaitingGauge();

  std::shared_ptr<const CoschedulingArgs> args_;
  FrameworkHandle& handle_;
  GangCache gangs_;
  std::unique_ptr<PodGroupController> controller_;
  metrics::Family<metrics::Gauge>* waiting_gauge_ = nullptr;
  metrics::Family<metrics::Counter>* rejections_ = nullptr;
};

}  // namespace koord::roles::scheduler::coscheduling
