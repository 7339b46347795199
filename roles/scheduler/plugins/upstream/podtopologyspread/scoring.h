// PodTopologySpread's Score side: PreScore counts matching pods per domain once over the
// snapshot; Score weighs a node's domain counts; NormalizeScore flips them so fewer is better.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "framework/cycle_state.h"
#include "framework/node_info.h"
#include "framework/plugin.h"
#include "framework/pod_info.h"
#include "framework/snapshot.h"
#include "plugins/upstream/podtopologyspread/constraint.h"
#include "plugins/upstream/podtopologyspread/domain_counts.h"

namespace koord::roles::scheduler::upstream::podtopologyspread {

inline constexpr std::string_view kPreScoreStateKey = "PreScorePodTopologySpread";
inline const StateKey kPreScoreState{kPreScoreStateKey};

/// Empty constraints: the pod has no ScheduleAnyway constraints, every node scores 0.
class PreScoreState final : public StateData {
 public:
  std::shared_ptr<const SpreadConstraints> constraints;
  /// Per constraint: matching pods per domain of the candidate nodes. A hostname constraint
  /// (flagged in per_node) counts each candidate's own pods instead, keyed by node name.
  std::vector<DomainCounts<std::int64_t>> counts;
  std::vector<bool> per_node;
  /// Per constraint: log(domains + 2), so small topologies are not watered down by big ones.
  std::vector<double> weights;
  /// Candidate nodes that lack a topology key: they score 0 and stay out of normalisation.
  std::size_t ignored_nodes = 0;

  bool empty() const { return !constraints || constraints->empty(); }
  /// Nothing changes the state after PreScore; a clone is a plain copy.
  std::unique_ptr<StateData> clone() const override {
    return std::make_unique<PreScoreState>(*this);
  }
};

/// kube-scheduler's topologyNormalizingWeight.
double topologyNormalizingWeight(std::size_t size);

/// Default constraints select by `selectors` (none apply when it is null).
PreScoreState computePreScoreState(const PodInfo& pod,
                                   const std::vector<DefaultSpreadConstraint>& defaults,
                                   const helper::SpreadSelectorIndex* selectors,
                                   const std::vector<const NodeInfo*>& candidates,
                                   const std::vector<std::shared_ptr<const NodeInfo>>& all_nodes);

/// The raw score of one of PreScore's candidates; a lookup per constraint, no allocation.
std::int64_t scoreNode(const PreScoreState& s, const NodeInfo& node);

/// Maps raw scores to [0, kMaxNodeScore], the fewest matching pods getting the most; ignored
/// nodes (looked up in `snapshot` by name) get 0.
void normalizeScores(const PreScoreState& s, const Snapshot& snapshot,
                     std::vector<NodeScore>& scores);

}  // namespace koord::roles::scheduler::upstream::podtopologyspread
