// The per-resource formulas and their weighted mean.
#include "plugins/nodenumaresource/scoring.h"

#include <utility>

namespace koord::roles::scheduler::nodenumaresource {

namespace {

struct AllocReq {
  std::int64_t allocatable = 0;
  std::int64_t requested = 0;
};

}  // namespace

std::optional<ScoringStrategyType> parseScoringStrategyType(std::string_view text) {
  if (text == "LeastAllocated")
    return ScoringStrategyType::kLeastAllocated;
  if (text == "MostAllocated")
    return ScoringStrategyType::kMostAllocated;
  return std::nullopt;
}

std::string_view toString(ScoringStrategyType type) {
  return type == ScoringStrategyType::kMostAllocated ? "MostAllocated" : "LeastAllocated";
}

std::int64_t leastRequestedScore(std::int64_t requested, std::int64_t capacity) {
  if (capacity == 0 || requested > capacity)
    return 0;
  return (capacity - requested) * kMaxNodeScore / capacity;
}

std::int64_t mostRequestedScore(std::int64_t requested, std::int64_t capacity) {
  if (capacity == 0)
    return 0;
  if (requested > capacity)
    requested = capacity;
  return requested * kMaxNodeScore / capacity;
}

ResourceAllocationScorer::ResourceAllocationScorer(ScoringStrategyType type,
                                                   std::vector<upstream::ResourceSpec> resources)
    : type_(type), resources_(std::move(resources)) {
  scalar_.reserve(resources_.size());
  fields_.reserve(resources_.size());
  for (const auto& r : resources_) {
    scalar_.push_back(upstream::isScalarResourceName(r.name));
    fields_.push_back(r.name == kResourceCPU                ? Field::kCpu
                      : r.name == kResourceMemory           ? Field::kMemory
                      : r.name == kResourceEphemeralStorage ? Field::kEphemeralStorage
                                                            : Field::kScalar);
  }
}

std::int64_t ResourceAllocationScorer::valueOf(const Resource& r, Field field,
                                               std::string_view name) {
  switch (field) {
    case Field::kCpu:
      return r.milli_cpu;
    case Field::kMemory:
      return r.memory;
    case Field::kEphemeralStorage:
      return r.ephemeral_storage;
    case Field::kScalar:
      break;
  }
  return r.scalarValue(name);
}

template <typename Lookup>
std::int64_t ResourceAllocationScorer::combine(Lookup&& lookup) const {
  std::int64_t sum = 0;
  std::int64_t weights = 0;
  for (std::size_t i = 0; i < resources_.size(); ++i) {
    const AllocReq ar = lookup(i);
    if (ar.allocatable == 0)
      continue;
    const std::int64_t s = type_ == ScoringStrategyType::kMostAllocated
                               ? mostRequestedScore(ar.requested, ar.allocatable)
                               : leastRequestedScore(ar.requested, ar.allocatable);
    sum += s * resources_[i].weight;
    weights += resources_[i].weight;
  }
  return weights == 0 ? 0 : sum / weights;
}

std::int64_t ResourceAllocationScorer::score(const Resource& requested, const Resource& allocatable,
                                             const Resource& pod_requests) const {
  return combine([&](std::size_t i) {
    const std::string_view name = resources_[i].name;
    const Field field = fields_[i];
    const std::int64_t pod = valueOf(pod_requests, field, name);
    if (pod == 0 && scalar_[i])
      return AllocReq{};
    return AllocReq{valueOf(allocatable, field, name), valueOf(requested, field, name) + pod};
  });
}

std::int64_t ResourceAllocationScorer::score(const NumaResources& requested,
                                             const NumaResources& allocatable,
                                             const NumaResources& pod_requests) const {
  return combine([&](std::size_t i) {
    const auto r = numaResourceByName(resources_[i].name);
    if (!r)
      return AllocReq{};
    const std::int64_t pod = pod_requests.get(*r);
    if (pod == 0 && scalar_[i])
      return AllocReq{};
    return AllocReq{allocatable.get(*r), requested.get(*r) + pod};
  });
}

}  // namespace koord::roles::scheduler::nodenumaresource
