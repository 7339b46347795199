#include "noderesource/need_sync.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include <fmt/format.h>

#include "koord/apis/extension.h"

namespace koord::roles::manager::noderesource {

bool isQuantityDiff(const kube::Quantity& old_value, const kube::Quantity& new_value,
                    double threshold) {
  std::int64_t old_milli = old_value.milliValue();
  std::int64_t new_milli = new_value.milliValue();
  std::int64_t delta = 0;
  if (__builtin_sub_overflow(new_milli, old_milli, &delta))
    return true;  // a move across the whole int64 range is a change by any threshold
  return std::fabs(static_cast<double>(delta)) > static_cast<double>(old_milli) * threshold;
}

bool isResourceDiff(const std::optional<kube::Quantity>& old_value,
                    const std::optional<kube::Quantity>& new_value, double threshold) {
  if (old_value.has_value() != new_value.has_value())
    return true;
  if (!old_value)
    return false;
  return isQuantityDiff(*old_value, *new_value, threshold);
}

SyncDecision needSync(const BatchValues& current, const BatchValues& desired,
                      const apis::ColocationStrategy& strategy,
                      std::optional<std::chrono::system_clock::time_point> last_write,
                      std::chrono::system_clock::time_point now) {
  if (!last_write)
    return {true, "node resource never synced by this manager"};
  // Clamped so that the seconds-to-clock conversion cannot overflow (±10^9 s is ~30 years).
  constexpr std::int64_t kMaxSeconds = 1'000'000'000;
  std::int64_t threshold =
      std::clamp(strategy.update_time_threshold_seconds, -kMaxSeconds, kMaxSeconds);
  if (now - *last_write > std::chrono::seconds(threshold)) {
    return {true, fmt::format("node resource expired: last synced over {}s ago",
                              strategy.update_time_threshold_seconds)};
  }
  if (isResourceDiff(current.cpu, desired.cpu, strategy.resource_diff_threshold)) {
    return {true, fmt::format("{} diff bigger than {}", apis::kBatchCPU,
                              strategy.resource_diff_threshold)};
  }
  if (isResourceDiff(current.memory, desired.memory, strategy.resource_diff_threshold)) {
    return {true, fmt::format("{} diff bigger than {}", apis::kBatchMemory,
                              strategy.resource_diff_threshold)};
  }
  return {};
}

}  // namespace koord::roles::manager::noderesource
