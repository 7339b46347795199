// NodeResourcesFit: room on the node for the pod's requests (cpu, memory, ephemeral storage,
// scalars like kubernetes.io/batch-cpu) and one more pod; v1beta2+ also scores (scoringStrategy).
#pragma once

#include <boost/json/fwd.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "framework/plugin.h"
#include "koord/kube/error.h"
#include "plugins/upstream/noderesources/resource_allocation.h"

namespace koord::roles::scheduler::upstream {

inline constexpr std::string_view kNodeResourcesFitName = "NodeResourcesFit";

enum class ScoringStrategyType { kLeastAllocated, kMostAllocated, kRequestedToCapacityRatio };

struct ScoringStrategy {
  ScoringStrategyType type = ScoringStrategyType::kLeastAllocated;
  std::vector<ResourceSpec> resources = defaultResourceSpecs();
  /// Only for kRequestedToCapacityRatio (scores scaled to [0, kMaxNodeScore]).
  std::vector<UtilizationShapePoint> shape;
};

struct NodeResourcesFitArgs final : PluginArgs {
  /// Extended resources the filter does not check.
  std::vector<std::string> ignored_resources;
  /// Extended-resource domains ("example.com") the filter does not check.
  std::vector<std::string> ignored_resource_groups;
  /// Set (defaulted to LeastAllocated over cpu and memory) for v1beta2+ configurations, which
  /// make NodeResourcesFit a Score plugin; unset for v1beta1, where it only filters.
  std::optional<ScoringStrategy> scoring_strategy;
};

/// Strict decoding with kube-scheduler's defaults and validation; scoringStrategy is an unknown
/// field under v1beta1.
kube::Expected<std::shared_ptr<const NodeResourcesFitArgs>> decodeNodeResourcesFitArgs(
    const boost::json::value* args, std::string_view api_version);

/// One resource the node is short of, and by how much (for the reason and for callers that
/// explain a failure, such as preemption or the cluster autoscaler).
struct InsufficientResource {
  std::string resource_name;
  std::string reason;  // "Insufficient cpu", "Too many pods"
  std::int64_t requested = 0;
  std::int64_t used = 0;
  std::int64_t capacity = 0;

  friend bool operator==(const InsufficientResource&, const InsufficientResource&) = default;
};

/// The pod count first, then cpu, memory, ephemeral storage and scalar resources by name. A pod
/// requesting nothing is checked only against the pod count. Only extended resources can be
/// ignored (kubernetes.io/ names always count). node.node must be set.
std::vector<InsufficientResource> fitsRequest(const Resource& pod_request, const NodeInfo& node,
                                              const NodeResourcesFitArgs& args);

class NodeResourcesFit : public PreFilterPlugin, public FilterPlugin {
 public:
  explicit NodeResourcesFit(std::shared_ptr<const NodeResourcesFitArgs> args);

  std::string_view name() const override { return kNodeResourcesFitName; }
  Status preFilter(CycleState& state, const PodInfo& pod) override;
  /// Unschedulable (preemption may free room) with one reason per insufficient resource.
  Status filter(const CycleState& state, const PodInfo& pod, const NodeInfo& node) const override;

 protected:
  std::shared_ptr<const NodeResourcesFitArgs> args_;
};

/// NodeResourcesFit as v1beta2+ builds it: also a Score plugin, by args.scoring_strategy.
class ScoringNodeResourcesFit final : public NodeResourcesFit, public ScorePlugin {
 public:
  /// args must carry a scoring_strategy.
  explicit ScoringNodeResourcesFit(std::shared_ptr<const NodeResourcesFitArgs> args);

  std::string_view name() const override { return kNodeResourcesFitName; }
  Status score(const CycleState& state, const PodInfo& pod, const NodeInfo& node,
               std::int64_t& score) const override;

 private:
  std::vector<ResolvedResource> resources_;  // the strategy's resources, resolved once
};

}  // namespace koord::roles::scheduler::upstream
