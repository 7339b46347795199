// Node-resource scoring shared by NodeResourcesFit's scoringStrategy and the v1beta1 plugins:
// allocatable vs. requested-with-the-pod, and the Least/Most/RTCR/Balanced allocation formulas.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "framework/node_info.h"
#include "framework/pod_info.h"

namespace koord::roles::scheduler::upstream {

struct ResourceSpec {
  std::string name;
  std::int64_t weight = 1;

  friend bool operator==(const ResourceSpec&, const ResourceSpec&) = default;
};

/// A point of RequestedToCapacityRatio's piecewise-linear function: utilization in [0, 100],
/// score already scaled from the args' [0, 10] to [0, kMaxNodeScore].
struct UtilizationShapePoint {
  std::int64_t utilization = 0;
  std::int64_t score = 0;

  friend bool operator==(const UtilizationShapePoint&, const UtilizationShapePoint&) = default;
};

/// cpu and memory, weight 1 each: every scorer's resources when none are configured.
std::vector<ResourceSpec> defaultResourceSpecs();

/// v1helper.IsExtendedResourceName: a name with a domain outside kubernetes.io (and not
/// "requests."-prefixed) that is a qualified name once "requests." is put in front.
bool isExtendedResourceName(std::string_view name);
/// v1helper.IsScalarResourceName: extended, hugepages-*, attachable-volumes-* or a
/// kubernetes.io-prefixed name (kubernetes.io/batch-cpu).
bool isScalarResourceName(std::string_view name);

struct AllocatableRequested {
  std::int64_t allocatable = 0;
  std::int64_t requested = 0;  // the node's requests plus the pod's
};

/// cpu and memory from the non-zero requests (node's and pod's: a pod asking nothing still
/// weighs 100m / 200Mi), ephemeral storage and scalar resources from the plain requests; any
/// other name (pods, a misspelling) is 0 / 0.
AllocatableRequested allocatableAndRequested(const NodeInfo& node, const PodInfo& pod,
                                             std::string_view resource);

/// A configured resource with its name resolved once to where its numbers live: the scorers
/// run on every node, where comparing and classifying names each time would dominate.
struct ResolvedResource {
  enum class Kind : std::uint8_t { kCPU, kMemory, kEphemeralStorage, kScalar, kNone };
  Kind kind = Kind::kNone;
  std::string name;
  std::int64_t weight = 1;
};
std::vector<ResolvedResource> resolveResources(const std::vector<ResourceSpec>& resources);

/// allocatableAndRequested by a resolved resource (the same numbers).
inline AllocatableRequested allocatableAndRequested(const NodeInfo& node, const PodInfo& pod,
                                                    const ResolvedResource& r) {
  if (!node.node)
    return {};
  const Resource& alloc = node.node->allocatable;
  switch (r.kind) {
    case ResolvedResource::Kind::kCPU:
      return {alloc.milli_cpu, node.non_zero_requested.milli_cpu + pod.non_zero_requests.milli_cpu};
    case ResolvedResource::Kind::kMemory:
      return {alloc.memory, node.non_zero_requested.memory + pod.non_zero_requests.memory};
    case ResolvedResource::Kind::kEphemeralStorage:
      return {alloc.ephemeral_storage,
              node.requested.ephemeral_storage + pod.requests.ephemeral_storage};
    case ResolvedResource::Kind::kScalar:
      return {alloc.scalarValue(r.name),
              node.requested.scalarValue(r.name) + pod.requests.scalarValue(r.name)};
    case ResolvedResource::Kind::kNone:
      break;
  }
  return {};
}

/// Which release's rules a scorer follows.
enum class ScorerRules {
  /// kube-scheduler 1.20 (the v1beta1 plugins): every configured resource is averaged in, one
  /// the node lacks scoring 0; MostAllocated scores a resource above capacity 0.
  kV1_20,
  /// scoringStrategy (v1beta2+): resources the node lacks are left out of the average;
  /// MostAllocated counts a resource above capacity as full.
  kScoringStrategy,
};

std::int64_t leastRequestedScore(std::int64_t requested, std::int64_t capacity);
std::int64_t mostRequestedScore(std::int64_t requested, std::int64_t capacity, ScorerRules rules);

/// The weighted average of leastRequestedScore over `resources` (integer division).
std::int64_t leastAllocatedScore(const NodeInfo& node, const PodInfo& pod,
                                 const std::vector<ResourceSpec>& resources, ScorerRules rules);
std::int64_t leastAllocatedScore(const NodeInfo& node, const PodInfo& pod,
                                 const std::vector<ResolvedResource>& resources, ScorerRules rules);
std::int64_t mostAllocatedScore(const NodeInfo& node, const PodInfo& pod,
                                const std::vector<ResourceSpec>& resources, ScorerRules rules);
std::int64_t mostAllocatedScore(const NodeInfo& node, const PodInfo& pod,
                                const std::vector<ResolvedResource>& resources, ScorerRules rules);
/// The shape evaluated at each resource's utilization; resources scoring 0 are left out of the
/// weighted average, which is rounded (scoringStrategy rules).
std::int64_t requestedToCapacityRatioScore(const NodeInfo& node, const PodInfo& pod,
                                           const std::vector<ResourceSpec>& resources,
                                           const std::vector<UtilizationShapePoint>& shape);
std::int64_t requestedToCapacityRatioScore(const NodeInfo& node, const PodInfo& pod,
                                           const std::vector<ResolvedResource>& resources,
                                           const std::vector<UtilizationShapePoint>& shape);
/// 1.20's BalancedAllocation: (1 - |cpuFraction - memoryFraction|) * 100, 0 when either
/// fraction reaches 1 (a node without cpu or memory counts as full).
std::int64_t balancedAllocationScore(const NodeInfo& node, const PodInfo& pod);
/// Later releases' BalancedAllocation over configured resources: (1 - std) * 100, std the
/// standard deviation of the fractions (each capped at 1), nodes lacking a resource skip it.
std::int64_t balancedAllocationScore(const NodeInfo& node, const PodInfo& pod,
                                     const std::vector<ResourceSpec>& resources);
std::int64_t balancedAllocationScore(const NodeInfo& node, const PodInfo& pod,
                                     const std::vector<ResolvedResource>& resources);

}  // namespace koord::roles::scheduler::upstream
