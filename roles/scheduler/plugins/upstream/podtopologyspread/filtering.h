// PodTopologySpread's Filter side: the per-pod state PreFilter counts once over the snapshot
// (matching pods per domain, the two least-loaded domains per constraint) and the skew check.
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <memory>
#include <string_view>
#include <vector>

#include "framework/cycle_state.h"
#include "framework/node_info.h"
#include "framework/pod_info.h"
#include "framework/status.h"
#include "plugins/upstream/podtopologyspread/constraint.h"
#include "plugins/upstream/podtopologyspread/domain_counts.h"

namespace koord::roles::scheduler::upstream::podtopologyspread {

inline constexpr std::string_view kPreFilterStateKey = "PreFilterPodTopologySpread";
inline const StateKey kPreFilterState{kPreFilterStateKey};

struct CriticalPath {
  std::string_view value;
  std::int32_t match_num = std::numeric_limits<std::int32_t>::max();
};

/// The domain with the fewest matching pods first, and one with at least as many second (not
/// necessarily the second fewest once preemption has moved counts). Two suffice because
/// preemption only removes pods from one node per what-if run, on its own copy of the state.
struct CriticalPaths {
  std::array<CriticalPath, 2> paths{};

  void update(std::string_view value, std::int32_t num);
  std::int32_t minMatch() const { return paths[0].match_num; }
};

/// Empty constraints: the pod has no DoNotSchedule constraints, Filter passes every node.
class PreFilterState final : public StateData {
 public:
  std::shared_ptr<const SpreadConstraints> constraints;  // shared by clones; never changes
  /// Per constraint: whether the incoming pod matches its own selector.
  std::vector<std::int32_t> self_match;
  /// Per constraint: matching pods per domain, over the domains of nodes that carry every
  /// topology key and pass the pod's node affinity.
  std::vector<DomainCounts<std::int32_t>> counts;
  std::vector<CriticalPaths> critical_paths;

  bool empty() const { return !constraints || constraints->empty(); }
  std::unique_ptr<StateData> clone() const override {
    return std::make_unique<PreFilterState>(*this);
  }
  /// +delta for `updated` on `node` (preemption adding a nominated pod or removing a victim).
  void updateWithPod(const PodInfo& updated, const PodInfo& preemptor, const NodeInfo& node,
                     std::int32_t delta);
};

/// The state for `pod` over every node of the snapshot, with kube-scheduler 1.20's rules;
/// default constraints select by `selectors` (none apply when it is null).
PreFilterState computePreFilterState(const PodInfo& pod,
                                     const std::vector<DefaultSpreadConstraint>& defaults,
                                     const helper::SpreadSelectorIndex* selectors,
                                     const std::vector<std::shared_ptr<const NodeInfo>>& nodes);

/// The verdict for one node; allocates nothing unless the node fails.
Status filterNode(const PreFilterState& state, const Node& node);

}  // namespace koord::roles::scheduler::upstream::podtopologyspread
