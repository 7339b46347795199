// TaintToleration: Filter refuses nodes with a NoSchedule/NoExecute taint the pod does not
// tolerate; Score counts the PreferNoSchedule taints it does not tolerate (fewer is better).
#pragma once

#include <string_view>

#include "framework/plugin.h"

namespace koord::roles::scheduler::upstream {

inline constexpr std::string_view kTaintTolerationName = "TaintToleration";

class TaintToleration final : public FilterPlugin, public PreScorePlugin, public ScorePlugin {
 public:
  std::string_view name() const override { return kTaintTolerationName; }
  Status filter(const CycleState& state, const PodInfo& pod, const NodeInfo& node) const override;
  /// Skip when no candidate carries a PreferNoSchedule taint (every node would score alike).
  Status preScore(CycleState& state, const PodInfo& pod,
                  const std::vector<const NodeInfo*>& nodes) override;
  /// The raw score is the number of intolerable PreferNoSchedule taints.
  Status score(const CycleState& state, const PodInfo& pod, const NodeInfo& node,
               std::int64_t& score) const override;
  bool hasNormalizeScore() const override { return true; }
  /// Reversed: the node with the most intolerable taints gets 0, none gets kMaxNodeScore.
  Status normalizeScore(const CycleState& state, const PodInfo& pod,
                        std::vector<NodeScore>& scores) const override;
};

}  // namespace koord::roles::scheduler::upstream
