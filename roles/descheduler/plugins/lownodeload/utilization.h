// Node utilization against percentage thresholds, shared by LowNodeLoad (usage from NodeMetric)
// and the community LowNodeUtilization / HighNodeUtilization (pod requests).
#pragma once

#include <boost/json/fwd.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "framework/types.h"
#include "koord/core/expected.h"

namespace koord::roles::descheduler::utilization {

/// Percent of allocatable by resource name (api.ResourceThresholds).
using Thresholds = std::map<std::string, double, std::less<>>;

inline constexpr double kMinPercent = 0;
inline constexpr double kMaxPercent = 100;

/// The amount `percent` of `allocatable[resource]` stands for (truncated, as Go's int64 cast).
std::int64_t amountOf(const ResourceAmounts& allocatable, std::string_view resource,
                      double percent);

/// `used` as a percent of `capacity`; 0 when there is no capacity.
double percentOf(std::int64_t used, std::int64_t capacity);

/// A node's low and high thresholds as amounts.
struct NodeThresholds {
  ResourceAmounts low;
  ResourceAmounts high;
};

/// Per-resource mean of the nodes' usage percent; nodes without capacity for a resource add
/// nothing to its sum but still count in the divisor, as both descheduler projects compute it.
Thresholds averagePercent(const std::vector<std::pair<const ResourceAmounts*, const Node*>>& nodes);

/// The thresholds of `node` for `names`. In deviation mode `low`/`high` are distances from
/// `average` (clamped to 0-100), and a low deviation of zero turns both into the full capacity;
/// otherwise they are plain percents.
NodeThresholds nodeThresholds(const Node& node, const std::vector<std::string>& names,
                              const Thresholds& low, const Thresholds& high, bool deviation,
                              const Thresholds& average);

/// Every resource of `thresholds` that `usage` has is at or under its threshold.
bool atOrUnder(const ResourceAmounts& usage, const ResourceAmounts& thresholds);
/// The resources of `thresholds` whose usage is above it, in name order.
std::vector<std::string> overResources(const ResourceAmounts& usage,
                                       const ResourceAmounts& thresholds);

/// Each percent of `usage` over its node's `allocatable`, for reasons and logs:
/// "cpu 85.00% > 70.00%, memory ...", naming only `over`.
std::string describeOver(const std::vector<std::string>& over, const ResourceAmounts& usage,
                         const ResourceAmounts& thresholds, const ResourceAmounts& allocatable);

/// A ResourceThresholds member: an object of numbers, each within 0-100. Absent or null is
/// nullopt; errors name "<path>.<name>[<resource>]".
Expected<std::optional<Thresholds>> thresholdsField(const boost::json::object& o,
                                                    std::string_view name, std::string_view path);

/// api.Namespaces: which namespaces a plugin may evict from (include or exclude, not both).
struct Namespaces {
  std::vector<std::string> include;
  std::vector<std::string> exclude;
  bool allows(std::string_view ns) const;
};
/// The evictableNamespaces member; errors name the field, and both lists set is refused.
Expected<std::optional<Namespaces>> namespacesField(const boost::json::object& o,
                                                    std::string_view name, std::string_view path);

/// The args' numberOfNodes (absent: 0); a negative count is refused.
Expected<std::int32_t> numberOfNodesField(const boost::json::object& args);

/// "<path>.<name>", or the name alone at the root.
std::string childPath(std::string_view path, std::string_view name);

}  // namespace koord::roles::descheduler::utilization
