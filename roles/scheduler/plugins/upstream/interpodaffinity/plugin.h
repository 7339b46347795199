// InterPodAffinity (kube-scheduler 1.20): required pod affinity and anti-affinity as a filter
// (both the incoming pod's terms and existing pods' anti-affinity towards it), preferred terms
// and existing pods' terms towards the incoming pod as a score.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "framework/framework_handle.h"
#include "framework/plugin.h"
#include "plugins/upstream/interpodaffinity/args.h"

namespace koord::roles::scheduler::upstream::interpodaffinity {

inline constexpr std::string_view kName = "InterPodAffinity";

inline constexpr std::string_view kErrReasonExistingAntiAffinityRulesNotMatch =
    "node(s) didn't satisfy existing pods anti-affinity rules";
inline constexpr std::string_view kErrReasonAffinityNotMatch =
    "node(s) didn't match pod affinity/anti-affinity";
inline constexpr std::string_view kErrReasonAffinityRulesNotMatch =
    "node(s) didn't match pod affinity rules";
inline constexpr std::string_view kErrReasonAntiAffinityRulesNotMatch =
    "node(s) didn't match pod anti-affinity rules";

class InterPodAffinity final : public PreFilterPlugin,
                               public PreFilterExtensions,
                               public FilterPlugin,
                               public PreScorePlugin,
                               public ScorePlugin {
 public:
  /// `handle` must outlive the plugin; its snapshot is read in PreFilter and PreScore only.
  InterPodAffinity(std::shared_ptr<const InterPodAffinityArgs> args, const FrameworkHandle& handle);

  std::string_view name() const override { return kName; }

  /// Counts, once per pod, the topology pairs Filter needs: existing pods' required
  /// anti-affinity matching the pod (only nodes listed with such pods are walked) and, when
  /// the pod has required terms, the pods matching its affinity and anti-affinity. Skip when
  /// nothing can fail the pod (no required terms, no anti-affinity towards it, no nominations).
  Status preFilter(CycleState& state, const PodInfo& pod) override;
  const PreFilterExtensions* preFilterExtensions() const override { return this; }
  Status addPod(CycleState& state, const PodInfo& pod_to_schedule, const PodInfo& pod_to_add,
                const NodeInfo& node) const override;
  Status removePod(CycleState& state, const PodInfo& pod_to_schedule, const PodInfo& pod_to_remove,
                   const NodeInfo& node) const override;

  /// Affinity failures are UnschedulableAndUnresolvable, anti-affinity ones Unschedulable
  /// (removing pods may help), each with the generic reason first.
  Status filter(const CycleState& state, const PodInfo& pod, const NodeInfo& node) const override;

  /// Sums weights per topology pair over all nodes' pods when the pod has preferred terms,
  /// else over the pods with (anti-)affinity only (they alone can contribute). Skip when no
  /// term touches any domain (every node would score 0).
  Status preScore(CycleState& state, const PodInfo& pod,
                  const std::vector<const NodeInfo*>& nodes) override;
  /// Raw: the sum over the node's topology pairs; negative for anti-affinity.
  Status score(const CycleState& state, const PodInfo& pod, const NodeInfo& node,
               std::int64_t& score) const override;
  bool hasNormalizeScore() const override { return true; }
  /// Maps [min(0, lowest), max(0, highest)] onto [0, kMaxNodeScore].
  Status normalizeScore(const CycleState& state, const PodInfo& pod,
                        std::vector<NodeScore>& scores) const override;

 private:
  Status update(CycleState& state, const PodInfo& pod_to_schedule, const PodInfo& pod,
                const NodeInfo& node, std::int64_t delta) const;

  std::shared_ptr<const InterPodAffinityArgs> args_;
  const FrameworkHandle* handle_;
};

}  // namespace koord::roles::scheduler::upstream::interpodaffinity
