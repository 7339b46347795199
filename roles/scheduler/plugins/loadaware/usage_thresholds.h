// The usage thresholds Filter applies on one node: the args' (plain, prod, aggregated), each part
// replaced where the node's scheduling.koordinator.sh/usage-thresholds annotation sets it.
#pragma once

#include <chrono>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

#include "framework/node_info.h"
#include "plugins/loadaware/args.h"
#include "plugins/loadaware/resource_vector.h"

namespace koord::roles::scheduler::loadaware {

inline constexpr std::string_view kAnnotationCustomUsageThresholds =
    "scheduling.koordinator.sh/usage-thresholds";

struct AggregatedUsageProfile {
  ResourceVector thresholds;
  std::string type;  // "avg", "p50", ...
  std::chrono::nanoseconds duration{0};
};

/// An all-zero vector disables that kind of check.
struct UsageThresholdsProfile {
  ResourceVector usage;
  ResourceVector prod_usage;
  /// Set only with thresholds and an aggregation type (either alone means nothing).
  std::optional<AggregatedUsageProfile> aggregated;
};

/// Koordinator's check of one resource: round(estimated / total x 100) <= threshold, where a
/// zero threshold or a zero allocatable passes anything.
bool withinThreshold(std::int64_t threshold, std::int64_t total, std::int64_t estimated);

/// usageLimit's answers: estimates in [0, kExactRange] pass exactly when they are at most the
/// limit; outside that range, and where the limit is kUseFormula (a negative allocatable), only
/// withinThreshold tells.
inline constexpr std::int64_t kExactRange = std::int64_t{1} << 56;
inline constexpr std::int64_t kUseFormula = std::numeric_limits<std::int64_t>::min();

/// The largest estimate in [0, kExactRange] that withinThreshold passes (-1 when none does).
/// The percentage never falls as the estimate grows, so Filter compares every node's estimate
/// with the node's limits, computed once, instead of dividing.
std::int64_t usageLimit(std::int64_t threshold, std::int64_t total);

UsageThresholdsProfile profileFromArgs(const LoadAwareSchedulingArgs& args,
                                       const ResourceVectorizer& vectorizer);

/// The profile with the node's annotation applied; nullopt when the annotation is absent, sets
/// nothing, or is malformed (then logged at -v=5 and the args' profile applies, as in
/// Koordinator: a bad annotation must not make a node unschedulable).
std::optional<UsageThresholdsProfile> nodeProfile(const UsageThresholdsProfile& base,
                                                  const Node& node,
                                                  const ResourceVectorizer& vectorizer);

}  // namespace koord::roles::scheduler::loadaware
