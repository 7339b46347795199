// NodeAffinity: Filter on spec.nodeSelector and the required node affinity, Score by matching
// preferred terms' weights; v1beta2 args may add an affinity every pod of the profile must meet.
#pragma once

#include <boost/json/fwd.hpp>

#include <memory>
#include <optional>
#include <string_view>

#include "framework/plugin.h"
#include "koord/kube/error.h"
#include "koord/kube/scheduling_match.h"

namespace koord::roles::scheduler::upstream {

inline constexpr std::string_view kNodeAffinityName = "NodeAffinity";
inline constexpr std::string_view kErrReasonNodeSelector = "node(s) didn't match node selector";
inline constexpr std::string_view kErrReasonEnforced =
    "node(s) didn't match scheduler-enforced node affinity";

struct NodeAffinityArgs final : PluginArgs {
  /// Checked before the pod's own affinity; its preferred terms add to every node's score.
  std::optional<kube::NodeAffinity> added_affinity;
};

/// Strict: only addedAffinity (with the API's NodeAffinity shape) is known; its requirements
/// are validated so that a bad one fails at startup rather than matching nothing.
kube::Expected<std::shared_ptr<const NodeAffinityArgs>> decodeNodeAffinityArgs(
    const boost::json::value* args, std::string_view api_version);

class NodeAffinity final : public PreFilterPlugin,
                           public FilterPlugin,
                           public PreScorePlugin,
                           public ScorePlugin {
 public:
  explicit NodeAffinity(std::shared_ptr<const NodeAffinityArgs> args);

  std::string_view name() const override { return kNodeAffinityName; }
  /// Skip when neither the pod (nodeSelector, required terms) nor the args require anything:
  /// Filter would pass every node. v1beta2+ default profiles list it here (upstream 1.22+);
  /// v1beta1's do not; there passesEveryNode gives the framework the same answer.
  Status preFilter(CycleState& state, const PodInfo& pod) override;
  Status filter(const CycleState& state, const PodInfo& pod, const NodeInfo& node) const override;
  bool passesEveryNode(const PodInfo& pod) const override;
  /// Skip when neither the pod nor the args have preferred terms: every node would score 0
  /// (later upstream's PreScore; 1.20 had none, and scoresEveryNodeAlike answers for it).
  Status preScore(CycleState& state, const PodInfo& pod,
                  const std::vector<const NodeInfo*>& nodes) override;
  Status score(const CycleState& state, const PodInfo& pod, const NodeInfo& node,
               std::int64_t& score) const override;
  bool scoresEveryNodeAlike(const PodInfo& pod) const override;
  bool hasNormalizeScore() const override { return true; }
  Status normalizeScore(const CycleState& state, const PodInfo& pod,
                        std::vector<NodeScore>& scores) const override;

 private:
  std::shared_ptr<const NodeAffinityArgs> args_;
};

}  // namespace koord::roles::scheduler::upstream
