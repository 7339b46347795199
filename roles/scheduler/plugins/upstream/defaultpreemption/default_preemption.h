// DefaultPreemption, kube-scheduler 1.20's PostFilter: when no node fits, evict the cheapest set
// of lower-priority pods on the best node and nominate that node for the pod.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "framework/framework_handle.h"
#include "framework/plugin.h"
#include "plugins/upstream/defaultpreemption/args.h"
#include "plugins/upstream/defaultpreemption/victims.h"

namespace koord::roles::scheduler::upstream {

inline constexpr std::string_view kDefaultPreemptionName = "DefaultPreemption";

/// What a dry run over the nodes found.
struct DryRunResult {
  /// Nodes without PDB violations first, then the others; each group in visiting order.
  std::vector<Candidate> candidates;
  /// Why the visited nodes that are no candidates are not, each reason counted.
  std::map<std::string, std::size_t, std::less<>> reasons;
  /// Nodes simulated before the run stopped.
  std::size_t visited = 0;
};

class DefaultPreemption final : public PostFilterPlugin {
 public:
  /// `seed` picks where each dry run starts among the nodes (random_device in production).
  DefaultPreemption(std::shared_ptr<const DefaultPreemptionArgs> args,
                    const FrameworkHandle& handle, std::uint64_t seed);
  /// Preemption under other rules (ElasticQuota's, inside a quota), named as its plugin.
  DefaultPreemption(std::shared_ptr<const DefaultPreemptionArgs> args,
                    const FrameworkHandle& handle, std::uint64_t seed, std::string name,
                    VictimRules rules);

  std::string_view name() const override { return name_; }
  /// Success with result.nominated_node_name set once the victims are deleted; Unschedulable
  /// when preemption cannot help; Error when a deletion failed. The handle's extenders with a
  /// preempt verb narrow the candidates before the pick (an empty answer leaves none: "no
  /// candidate node for preemption"); a required one's failure is that Error.
  Status postFilter(CycleState& state, const PodInfo& pod,
                    const NodeStatusMap& filtered_node_status, PostFilterResult& result) override;

  /// max(num_nodes * percentage / 100, absolute), at most num_nodes.
  std::size_t numCandidates(std::size_t num_nodes) const;

  /// Simulates preemption on nodes[(offset + i) % n] in turn, stopping once there are
  /// num_candidates candidates, at least one of them without PDB violations (upstream's dry run
  /// at parallelism 1; each group keeps at most num_candidates).
  DryRunResult dryRunPreemption(const CycleState& state, const PodInfo& pod,
                                const std::vector<const NodeInfo*>& nodes, std::size_t offset,
                                std::size_t num_candidates,
                                std::chrono::system_clock::time_point now) const;

  /// Deletes the victims (the first failure ends it with an Error naming the pod) and clears the
  /// nominations of lower-priority pods nominated to the node (failures only logged).
  Status prepareCandidate(const Candidate& candidate, const PodInfo& pod) const;

 private:
  std::shared_ptr<const DefaultPreemptionArgs> args_;
  const FrameworkHandle& handle_;
  std::string name_ = std::string(kDefaultPreemptionName);
  VictimRules rules_;
  std::mt19937_64 rng_;
};

}  // namespace koord::roles::scheduler::upstream
