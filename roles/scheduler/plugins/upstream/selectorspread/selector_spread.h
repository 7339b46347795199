// SelectorSpread (kube-scheduler 1.20): favours nodes, and zones, holding fewer pods of the
// Services, RCs, ReplicaSets and StatefulSets that select the pod being scheduled.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "framework/cycle_state.h"
#include "framework/plugin.h"
#include "koord/kube/labels.h"
#include "plugins/upstream/helper/default_selector.h"

namespace koord::roles::scheduler {
class FrameworkHandle;
struct Node;
}  // namespace koord::roles::scheduler

namespace koord::roles::scheduler::upstream {

inline constexpr std::string_view kSelectorSpreadName = "SelectorSpread";
inline constexpr std::string_view kSelectorSpreadStateKey = "PreScoreSelectorSpread";

/// Of the node's score, the zone's share when the node has a zone (upstream's zoneWeighting).
inline constexpr double kZoneWeighting = 2.0 / 3.0;

/// The node's failure zone as utilnode.GetZoneKey reads it (the beta failure-domain labels
/// before the topology.kubernetes.io ones, each where present): region and zone, both views
/// into the node's labels; both empty when the node has no zone.
struct ZoneKey {
  std::string_view region;
  std::string_view zone;

  bool empty() const { return region.empty() && zone.empty(); }
  friend bool operator==(const ZoneKey&, const ZoneKey&) = default;
};
ZoneKey zoneKey(const kube::Labels& node_labels);

/// PreScore finds the pod's selector once; Score counts the node's pods it selects (same
/// namespace, not terminating); NormalizeScore turns counts into [0, 100], fewer pods higher,
/// two thirds of it from the node's zone where nodes have zones. A pod with spread constraints
/// of its own, or that nothing selects, gets Skip at PreScore: upstream scores every node alike
/// for it (0, or 100).
class SelectorSpread final : public PreScorePlugin, public ScorePlugin {
 public:
  explicit SelectorSpread(const FrameworkHandle& handle);

  std::string_view name() const override { return kSelectorSpreadName; }

  Status preScore(CycleState& state, const PodInfo& pod,
                  const std::vector<const NodeInfo*>& nodes) override;
  Status score(const CycleState& state, const PodInfo& pod, const NodeInfo& node,
               std::int64_t& score) const override;
  bool hasNormalizeScore() const override { return true; }
  Status normalizeScore(const CycleState& state, const PodInfo& pod,
                        std::vector<NodeScore>& scores) const override;

 private:
  const FrameworkHandle& handle_;
  helper::SpreadSelectorIndex selectors_;
};

}  // namespace koord::roles::scheduler::upstream
