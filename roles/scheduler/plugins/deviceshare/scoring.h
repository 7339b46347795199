// DeviceShare's scoringStrategy: LeastAllocated (spread) or MostAllocated (binpack) over weighted
// device resources, scoring one device (which device a pod gets) and a whole node (Score).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <utility>

#include "plugins/deviceshare/device_resources.h"

namespace koord::roles::scheduler::deviceshare {

enum class ScoringStrategyType : std::uint8_t { kLeastAllocated, kMostAllocated };

inline constexpr std::int64_t kMaxNodeScore = 100;

struct DeviceScorer {
  ScoringStrategyType type = ScoringStrategyType::kLeastAllocated;
  /// Weight per resource; zero leaves the resource out. Koordinator's default: gpu-memory-ratio,
  /// rdma and fpga at 1.
  std::array<std::int64_t, kDeviceResourceCount> weights{};

  /// scoringStrategy {type, resources: [{name, weight}]}; names that are no device resource are
  /// ignored (no device offers them, so Koordinator's scorer skips them too).
  static DeviceScorer fromSpec(ScoringStrategyType type,
                               std::span<const std::pair<std::string, std::int64_t>> resources);
  /// LeastAllocated with Koordinator's default resources.
  static DeviceScorer defaults();

  /// 0..100 for placing `request` on one device offering `total` with `free` left: for each
  /// weighted resource the device offers, requested = total - free + request, scored
  /// (total - requested) * 100 / total (LeastAllocated, 0 when over) or requested * 100 / total
  /// (MostAllocated, capped), then the weighted mean, integer division throughout.
  std::int64_t scoreDevice(const DeviceResources& request, const DeviceResources& total,
                           const DeviceResources& free) const;
};

}  // namespace koord::roles::scheduler::deviceshare
