#include "plugins/deviceshare/scoring.h"

#include <algorithm>
#include <limits>

namespace koord::roles::scheduler::deviceshare {

namespace {

// amount * 100 / capacity for 0 <= amount <= capacity: in 64 bits where the product fits (a
// 128-bit division is a library call, and Score runs this on every node).
std::int64_t percentOf(std::int64_t amount, std::int64_t capacity) {
  if (amount <= std::numeric_limits<std::int64_t>::max() / kMaxNodeScore)
    return amount * kMaxNodeScore / capacity;
  return static_cast<std::int64_t>(static_cast<WideInt>(amount) * kMaxNodeScore / capacity);
}

std::int64_t leastRequestedScore(std::int64_t requested, std::int64_t capacity) {
  if (capacity <= 0 || requested > capacity)
    return 0;
  return percentOf(capacity - requested, capacity);
}

std::int64_t mostRequestedScore(std::int64_t requested, std::int64_t capacity) {
  if (capacity <= 0)
    return 0;
  requested = std::min(requested, capacity);
  return percentOf(std::max<std::int64_t>(requested, 0), capacity);
}

}  // namespace

DeviceScorer DeviceScorer::fromSpec(
    ScoringStrategyType type, std::span<const std::pair<std::string, std::int64_t>> resources) {
  DeviceScorer s;
  s.type = type;
  for (const auto& [name, weight] : resources) {
    if (auto r = parseDeviceResource(name))
      s.weights[static_cast<std::size_t>(*r)] = weight;
  }
  return s;
}

DeviceScorer DeviceScorer::defaults() {
  DeviceScorer s;
  s.weights[static_cast<std::size_t>(DeviceResource::kGPUMemoryRatio)] = 1;
  s.weights[static_cast<std::size_t>(DeviceResource::kRDMA)] = 1;
  s.weights[static_cast<std::size_t>(DeviceResource::kFPGA)] = 1;
  return s;
}

std::int64_t DeviceScorer::scoreDevice(const DeviceResources& request, const DeviceResources& total,
                                       const DeviceResources& free) const {
  WideInt score = 0;
  WideInt weight_sum = 0;
  for (std::size_t i = 0; i < kDeviceResourceCount; ++i) {
    const std::int64_t weight = weights[i];
    const std::int64_t capacity = total.amount[i];
    if (weight == 0 || capacity == 0)
      continue;
    // What is taken already plus the request; a free amount above the total (never, with the
    // non-negative accounting) would leave the total as Koordinator leaves it.
    std::int64_t requested = capacity;
    if (capacity >= free.amount[i]) {
      const WideInt sum = static_cast<WideInt>(capacity) - free.amount[i] + request.amount[i];
      requested = static_cast<std::int64_t>(
          std::min<WideInt>(sum, std::numeric_limits<std::int64_t>::max()));
    }
    const std::int64_t resource_score = type == ScoringStrategyType::kLeastAllocated
                                            ? leastRequestedScore(requested, capacity)
                                            : mostRequestedScore(requested, capacity);
    score += static_cast<WideInt>(resource_score) * weight;
    weight_sum += weight;
  }
  if (weight_sum == 0)
    return 0;
  constexpr WideInt kMax = std::numeric_limits<std::int64_t>::max();
  if (score <= kMax && weight_sum <= kMax)
    return static_cast<std::int64_t>(score) / static_cast<std::int64_t>(weight_sum);
  return static_cast<std::int64_t>(score / weight_sum);
}

}  // namespace koord::roles::scheduler::deviceshare
