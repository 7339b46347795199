// VolumeBindingArgs: how long PreBind waits for the PV controller to finish a pod's bindings,
// and later versions' capacity-scoring shape, decoded strictly per configuration version.
#pragma once

#include <boost/json/fwd.hpp>

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "framework/plugin.h"
#include "koord/kube/error.h"

namespace koord::roles::scheduler::upstream::volumebinding {

inline constexpr std::int64_t kDefaultBindTimeoutSeconds = 600;
/// A shape point's score is within [0, kMaxShapeScore] (MaxCustomPriorityScore).
inline constexpr std::int32_t kMaxShapeScore = 10;

struct ShapePoint {
  std::int32_t utilization = 0;
  std::int32_t score = 0;

  friend bool operator==(const ShapePoint&, const ShapePoint&) = default;
};

struct VolumeBindingArgs final : PluginArgs {
  /// 0 (v1beta2 and later only): no limit.
  std::int64_t bind_timeout_seconds = kDefaultBindTimeoutSeconds;
  /// VolumeCapacityPriority's utilization-to-score shape (v1beta2 and later); validated, but
  /// this build scores no volume capacity, so it changes nothing.
  std::vector<ShapePoint> shape;
};

/// Strict decoding. v1beta1 (kube-scheduler 1.20) knows bindTimeoutSeconds only and refuses a
/// timeout that is not positive, as 1.20's plugin does ("invalid BindTimeoutSeconds: 0, must be
/// positive integer"); later versions also take `shape` and refuse only a negative timeout
/// ("bindTimeoutSeconds: Invalid value: -1: invalid BindTimeoutSeconds, should not be a negative
/// value"). An absent or null timeout is 600.
kube::Expected<std::shared_ptr<const VolumeBindingArgs>> decodeVolumeBindingArgs(
    const boost::json::value* args, std::string_view api_version);

}  // namespace koord::roles::scheduler::upstream::volumebinding
