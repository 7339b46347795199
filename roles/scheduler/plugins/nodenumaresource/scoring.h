// NodeNUMAResource's LeastAllocated and MostAllocated scores (0..100, weighted over the
// configured resources), for a whole node and for the NUMA nodes a hint would use.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "framework/resource.h"
#include "plugins/nodenumaresource/numa_resources.h"
#include "plugins/upstream/noderesources/resource_allocation.h"

namespace koord::roles::scheduler::nodenumaresource {

inline constexpr std::int64_t kMaxNodeScore = 100;

enum class ScoringStrategyType : std::uint8_t { kLeastAllocated, kMostAllocated };
/// "LeastAllocated", "MostAllocated"; nullopt otherwise.
std::optional<ScoringStrategyType> parseScoringStrategyType(std::string_view text);
std::string_view toString(ScoringStrategyType type);

/// (capacity - requested) * 100 / capacity; 0 without capacity or past it.
std::int64_t leastRequestedScore(std::int64_t requested, std::int64_t capacity);
/// requested * 100 / capacity, requested capped at capacity; 0 without capacity.
std::int64_t mostRequestedScore(std::int64_t requested, std::int64_t capacity);

/// Koordinator's resourceAllocationScorer. A resource takes part when the node (or NUMA nodes)
/// has some of it, and a scalar resource (extended, hugepages) only when the pod requests it;
/// the score is the weighted mean of the per-resource scores (0 when none takes part).
class ResourceAllocationScorer {
 public:
  ResourceAllocationScorer(ScoringStrategyType type, std::vector<upstream::ResourceSpec> resources);

  ScoringStrategyType type() const { return type_; }
  const std::vector<upstream::ResourceSpec>& resources() const { return resources_; }

  /// `requested`: what is already held; the pod's requests are added to it.
  std::int64_t score(const Resource& requested, const Resource& allocatable,
                     const Resource& pod_requests) const;
  /// The same over NUMA resources (names other than cpu, memory and hugepages take no part).
  std::int64_t score(const NumaResources& requested, const NumaResources& allocatable,
                     const NumaResources& pod_requests) const;

 private:
  template <typename Lookup>
  std::int64_t combine(Lookup&& lookup) const;

  /// Where a resource's amount lives in a Resource, settled once rather than by name per node.
  enum class Field : std::uint8_t { kCpu, kMemory, kEphemeralStorage, kScalar };
  static std::int64_t valueOf(const Resource& r, Field field, std::string_view name);

  ScoringStrategyType type_;
  std::vector<upstream::ResourceSpec> resources_;
  std::vector<bool> scalar_;   // by resources_ index
  std::vector<Field> fields_;  // by resources_ index
};

}  // namespace koord::roles::scheduler::nodenumaresource
