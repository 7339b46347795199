#include "plugins/upstream/noderesources/resource_allocation.h"

#include <cmath>

#include "framework/plugin.h"
#include "koord/kube/labels.h"

namespace koord::roles::scheduler::upstream {

namespace {

constexpr std::string_view kRequestsPrefix = "requests.";
constexpr std::string_view kDefaultNamespacePrefix = "kubernetes.io/";
constexpr std::int64_t kMaxUtilization = 100;

const ResolvedResource kCPUResource{ResolvedResource::Kind::kCPU, std::string(kResourceCPU), 1};
const ResolvedResource kMemoryResource{ResolvedResource::Kind::kMemory,
                                       std::string(kResourceMemory), 1};

bool isPrefixedNativeResource(std::string_view name) {
  return name.find(kDefaultNamespacePrefix) != std::string_view::npos;
}

bool isNativeResource(std::string_view name) {
  return name.find('/') == std::string_view::npos || isPrefixedNativeResource(name);
}

std::int64_t evaluateShape(const std::vector<UtilizationShapePoint>& shape,
                           std::int64_t utilization) {
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (utilization > shape[i].utilization)
      continue;
    if (i == 0)
      return shape[0].score;
    const auto& lo = shape[i - 1];
    const auto& hi = shape[i];
    return lo.score + (hi.score - lo.score) * (utilization - lo.utilization) /
                          (hi.utilization - lo.utilization);
  }
  return shape.empty() ? 0 : shape.back().score;
}

// The weighted average of per_resource over `resources`. Under the scoringStrategy rules a
// resource the node does not have is left out, so a node without batch-cpu is not marked down
// for a pod that does not ask for it.
template <typename Fn>
std::int64_t weightedAverage(const NodeInfo& node, const PodInfo& pod,
                             const std::vector<ResolvedResource>& resources, ScorerRules rules,
                             Fn&& per_resource) {
  std::int64_t total = 0;
  std::int64_t weight_sum = 0;
  for (const auto& r : resources) {
    const AllocatableRequested ar = allocatableAndRequested(node, pod, r);
    if (rules == ScorerRules::kScoringStrategy && ar.allocatable == 0)
      continue;
    total += per_resource(ar.requested, ar.allocatable) * r.weight;
    weight_sum += r.weight;
  }
  return weight_sum == 0 ? 0 : total / weight_sum;
}

double fractionOfCapacity(std::int64_t requested, std::int64_t capacity) {
  if (capacity == 0)
    return 1;
  return static_cast<double>(requested) / static_cast<double>(capacity);
}

}  // namespace

std::vector<ResourceSpec> defaultResourceSpecs() {
  return {{std::string(kResourceCPU), 1}, {std::string(kResourceMemory), 1}};
}

bool isExtendedResourceName(std::string_view name) {
  if (isNativeResource(name) || name.starts_with(kRequestsPrefix))
    return false;
  // A quota names it "requests.<name>", which must still be a qualified name.
  return !kube::validateLabelKey(std::string(kRequestsPrefix) + std::string(name)).has_value();
}

bool isScalarResourceName(std::string_view name) {
  return isExtendedResourceName(name) || name.starts_with("hugepages-") ||
         isPrefixedNativeResource(name) || name.starts_with("attachable-volumes-");
}

AllocatableRequested allocatableAndRequested(const NodeInfo& node, const PodInfo& pod,
                                             std::string_view resource) {
  if (!node.node)
    return {};
  const Resource& alloc = node.node->allocatable;
  if (resource == kResourceCPU)
    return {alloc.milli_cpu, node.non_zero_requested.milli_cpu + pod.non_zero_requests.milli_cpu};
  if (resource == kResourceMemory)
    return {alloc.memory, node.non_zero_requested.memory + pod.non_zero_requests.memory};
  if (resource == kResourceEphemeralStorage)
    return {alloc.ephemeral_storage,
            node.requested.ephemeral_storage + pod.requests.ephemeral_storage};
  if (isScalarResourceName(resource))
    return {alloc.scalarValue(resource),
            node.requested.scalarValue(resource) + pod.requests.scalarValue(resource)};
  return {};
}

std::int64_t leastRequestedScore(std::int64_t requested, std::int64_t capacity) {
  if (capacity == 0 || requested > capacity)
    return 0;
  return (capacity - requested) * kMaxNodeScore / capacity;
}

std::int64_t mostRequestedScore(std::int64_t requested, std::int64_t capacity, ScorerRules rules) {
  if (capacity == 0)
    return 0;
  if (requested > capacity) {
    // Pods without requests count 100m / 200Mi, which can push a node past its capacity.
    if (rules == ScorerRules::kV1_20)
      return 0;
    requested = capacity;
  }
  return requested * kMaxNodeScore / capacity;
}

std::vector<ResolvedResource> resolveResources(const std::vector<ResourceSpec>& resources) {
  using Kind = ResolvedResource::Kind;
  std::vector<ResolvedResource> out;
  out.reserve(resources.size());
  for (const auto& r : resources) {
    Kind kind = Kind::kNone;
    if (r.name == kResourceCPU)
      kind = Kind::kCPU;
    else if (r.name == kResourceMemory)
      kind = Kind::kMemory;
    else if (r.name == kResourceEphemeralStorage)
      kind = Kind::kEphemeralStorage;
    else if (isScalarResourceName(r.name))
      kind = Kind::kScalar;
    out.push_back({kind, r.name, r.weight});
  }
  return out;
}

std::int64_t leastAllocatedScore(const NodeInfo& node, const PodInfo& pod,
                                 const std::vector<ResourceSpec>& resources, ScorerRules rules) {
  return leastAllocatedScore(node, pod, resolveResources(resources), rules);
}

std::int64_t leastAllocatedScore(const NodeInfo& node, const PodInfo& pod,
                                 const std::vector<ResolvedResource>& resources,
                                 ScorerRules rules) {
  // A lambda, not the function itself, so that the formula inlines into the loop.
  return weightedAverage(node, pod, resources, rules,
                         [](std::int64_t requested, std::int64_t capacity) {
                           return leastRequestedScore(requested, capacity);
                         });
}

std::int64_t mostAllocatedScore(const NodeInfo& node, const PodInfo& pod,
                                const std::vector<ResourceSpec>& resources, ScorerRules rules) {
  return mostAllocatedScore(node, pod, resolveResources(resources), rules);
}

std::int64_t mostAllocatedScore(const NodeInfo& node, const PodInfo& pod,
                                const std::vector<ResolvedResource>& resources, ScorerRules rules) {
  return weightedAverage(node, pod, resources, rules,
                         [rules](std::int64_t requested, std::int64_t capacity) {
                           return mostRequestedScore(requested, capacity, rules);
                         });
}

std::int64_t requestedToCapacityRatioScore(const NodeInfo& node, const PodInfo& pod,
                                           const std::vector<ResourceSpec>& resources,
                                           const std::vector<UtilizationShapePoint>& shape) {
  return requestedToCapacityRatioScore(node, pod, resolveResources(resources), shape);
}

std::int64_t requestedToCapacityRatioScore(const NodeInfo& node, const PodInfo& pod,
                                           const std::vector<ResolvedResource>& resources,
                                           const std::vector<UtilizationShapePoint>& shape) {
  std::int64_t total = 0;
  std::int64_t weight_sum = 0;
  for (const auto& r : resources) {
    const AllocatableRequested ar = allocatableAndRequested(node, pod, r);
    if (ar.allocatable == 0)
      continue;
    std::int64_t resource_score;
    if (ar.requested > ar.allocatable) {
      resource_score = evaluateShape(shape, kMaxUtilization);
    } else {
      const std::int64_t utilization =
          kMaxUtilization - (ar.allocatable - ar.requested) * kMaxUtilization / ar.allocatable;
      resource_score = evaluateShape(shape, utilization);
    }
    if (resource_score > 0) {
      total += resource_score * r.weight;
      weight_sum += r.weight;
    }
  }
  if (weight_sum == 0)
    return 0;
  return std::llround(static_cast<double>(total) / static_cast<double>(weight_sum));
}

std::int64_t balancedAllocationScore(const NodeInfo& node, const PodInfo& pod) {
  const AllocatableRequested cpu = allocatableAndRequested(node, pod, kCPUResource);
  const AllocatableRequested memory = allocatableAndRequested(node, pod, kMemoryResource);
  const double cpu_fraction = fractionOfCapacity(cpu.requested, cpu.allocatable);
  const double memory_fraction = fractionOfCapacity(memory.requested, memory.allocatable);
  // A node at or past capacity in either should never be preferred for balance.
  if (cpu_fraction >= 1 || memory_fraction >= 1)
    return 0;
  const double diff = std::abs(cpu_fraction - memory_fraction);
  return static_cast<std::int64_t>((1 - diff) * static_cast<double>(kMaxNodeScore));
}

std::int64_t balancedAllocationScore(const NodeInfo& node, const PodInfo& pod,
                                     const std::vector<ResourceSpec>& resources) {
  return balancedAllocationScore(node, pod, resolveResources(resources));
}

std::int64_t balancedAllocationScore(const NodeInfo& node, const PodInfo& pod,
                                     const std::vector<ResolvedResource>& resources) {
  std::vector<double> fractions;
  fractions.reserve(resources.size());
  double total = 0;
  for (const auto& r : resources) {
    const AllocatableRequested ar = allocatableAndRequested(node, pod, r);
    if (ar.allocatable == 0)
      continue;
    double f = static_cast<double>(ar.requested) / static_cast<double>(ar.allocatable);
    if (f > 1)
      f = 1;
    total += f;
    fractions.push_back(f);
  }
  double std_dev = 0;
  if (fractions.size() == 2) {
    std_dev = std::abs((fractions[0] - fractions[1]) / 2);
  } else if (fractions.size() > 2) {
    const double mean = total / static_cast<double>(fractions.size());
    double sum = 0;
    for (double f : fractions)
      sum += (f - mean) * (f - mean);
    std_dev = std::sqrt(sum / static_cast<double>(fractions.size()));
  }
  return static_cast<std::int64_t>((1 - std_dev) * static_cast<double>(kMaxNodeScore));
}

}  // namespace koord::roles::scheduler::upstream
