// PodTopologySpread (kube-scheduler 1.20): DoNotSchedule spread constraints filter nodes whose
// domain would exceed maxSkew, ScheduleAnyway ones score the least-loaded domains highest.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "framework/plugin.h"
#include "plugins/upstream/helper/default_selector.h"
#include "plugins/upstream/podtopologyspread/args.h"

namespace koord::roles::scheduler {
class FrameworkHandle;
}  // namespace koord::roles::scheduler

namespace koord::roles::scheduler::upstream {

inline constexpr std::string_view kPodTopologySpreadName = "PodTopologySpread";
inline constexpr std::string_view kErrReasonConstraintsNotMatch =
    "node(s) didn't match pod topology spread constraints";
inline constexpr std::string_view kErrReasonNodeLabelNotMatch =
    "node(s) didn't match pod topology spread constraints (missing required label)";

/// PreFilter and PreScore count over the handle's snapshot once per pod; Filter and Score read
/// only what they wrote. A pod without constraints (and no default ones applying) gets Skip at
/// both points and costs nothing per node. Default constraints select the pods of the pod's
/// Services, RCs, ReplicaSets and StatefulSets (helper::DefaultSelector), read from the
/// handle's ClusterView when the plugin is built; a view without those sources applies none.
class PodTopologySpread final : public PreFilterPlugin,
                                public PreFilterExtensions,
                                public FilterPlugin,
                                public PreScorePlugin,
                                public ScorePlugin {
 public:
  PodTopologySpread(std::shared_ptr<const PodTopologySpreadArgs> args,
                    const FrameworkHandle& handle);

  std::string_view name() const override { return kPodTopologySpreadName; }

  Status preFilter(CycleState& state, const PodInfo& pod) override;
  const PreFilterExtensions* preFilterExtensions() const override { return this; }
  Status addPod(CycleState& state, const PodInfo& pod_to_schedule, const PodInfo& pod_to_add,
                const NodeInfo& node) const override;
  Status removePod(CycleState& state, const PodInfo& pod_to_schedule, const PodInfo& pod_to_remove,
                   const NodeInfo& node) const override;
  /// UnschedulableAndUnresolvable when the node lacks a topology key, Unschedulable when
  /// placing the pod there would exceed a constraint's maxSkew.
  Status filter(const CycleState& state, const PodInfo& pod, const NodeInfo& node) const override;

  Status preScore(CycleState& state, const PodInfo& pod,
                  const std::vector<const NodeInfo*>& nodes) override;
  Status score(const CycleState& state, const PodInfo& pod, const NodeInfo& node,
               std::int64_t& score) const override;
  bool hasNormalizeScore() const override { return true; }
  Status normalizeScore(const CycleState& state, const PodInfo& pod,
                        std::vector<NodeScore>& scores) const override;

 private:
  Status updateWithPod(CycleState& state, const PodInfo& pod_to_schedule, const PodInfo& updated,
                       const NodeInfo& node, std::int32_t delta) const;

  std::shared_ptr<const PodTopologySpreadArgs> args_;
  const FrameworkHandle& handle_;
  /// Null without default constraints (upstream reads the listers only then).
  std::unique_ptr<helper::SpreadSelectorIndex> selectors_;
};

}  // namespace koord::roles::scheduler::upstream
