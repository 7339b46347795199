// The koordinator-system/slo-controller-config ConfigMap: each key parsed with Koordinator's
// defaults, node-specific strategies picked by nodeSelector, and the NodeSLO spec they merge into.
#pragma once

#include <boost/json/object.hpp>

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "koord/kube/error.h"
#include "koord/kube/labels.h"

namespace koord::apis {

// ConfigMap keys (apis/configuration/slo_controller_config.go).
inline constexpr std::string_view kColocationConfigKey = "colocation-config";
inline constexpr std::string_view kResourceThresholdConfigKey = "resource-threshold-config";
inline constexpr std::string_view kResourceQOSConfigKey = "resource-qos-config";
inline constexpr std::string_view kCPUBurstConfigKey = "cpu-burst-config";
inline constexpr std::string_view kSystemConfigKey = "system-config";
inline constexpr std::string_view kHostApplicationConfigKey = "host-application-config";
inline constexpr std::string_view kCPUNormalizationConfigKey = "cpu-normalization-config";
inline constexpr std::string_view kResourceAmplificationConfigKey = "resource-amplification-config";

// Node labels that override the static mid reservation (a float ratio, x100 as percent), beside
// the cpu/memory-reclaim-ratio labels in extension.h.
inline constexpr std::string_view kLabelMidStaticCPUReservedRatio =
    "node.koordinator.sh/mid-static-cpu-reserved-ratio";
inline constexpr std::string_view kLabelMidStaticMemoryReservedRatio =
    "node.koordinator.sh/mid-static-memory-reserved-ratio";

/// How the reclaimable amount of a resource is computed (CalculatePolicy).
enum class CalculatePolicy : std::uint8_t {
  kUsage,            // "usage": capacity - margin - system used - HP pods' usage (default)
  kRequest,          // "request": capacity - margin - node reserved - HP pods' requests
  kMaxUsageRequest,  // "maxUsageRequest": HP pods' max(usage, request)
};
std::string_view calculatePolicyName(CalculatePolicy p);
/// "usage", "request", "maxUsageRequest"; nullopt for anything else.
std::optional<CalculatePolicy> calculatePolicyByName(std::string_view name);

/// colocation-config with every field resolved (defaults, then cluster, then the first matching
/// nodeConfig, then the node's own annotation and reclaim-ratio labels). cpu_calculate_policy is
/// never kRequest: Koordinator computes batch CPU by usage unless it is maxUsageRequest, so a
/// configured "request" resolves to kUsage.
struct ColocationStrategy {
  bool enable = false;
  std::int64_t metric_aggregate_duration_seconds = 300;
  std::int64_t metric_report_interval_seconds = 60;
  std::vector<std::chrono::seconds> metric_aggregate_durations{
      std::chrono::minutes(5), std::chrono::minutes(10), std::chrono::minutes(30)};
  /// "usageWithoutPageCache" (default), "usageWithHotPageCache", "usageWithPageCache".
  std::string metric_memory_collect_policy = "usageWithoutPageCache";
  std::int64_t cpu_reclaim_threshold_percent = 60;
  CalculatePolicy cpu_calculate_policy = CalculatePolicy::kUsage;
  std::int64_t memory_reclaim_threshold_percent = 65;
  CalculatePolicy memory_calculate_policy = CalculatePolicy::kUsage;
  std::int64_t degrade_time_minutes = 15;
  std::int64_t update_time_threshold_seconds = 300;
  double resource_diff_threshold = 0.1;
  /// "static": mid = capacity x midStatic*ReservedPercent; anything else, and the default ""
  /// (unset in Koordinator's DefaultColocationStrategy), the dynamic formula.
  std::string mid_reclaim_mode;
  std::int64_t mid_cpu_threshold_percent = 100;
  std::int64_t mid_memory_threshold_percent = 100;
  std::int64_t mid_unallocated_percent = 0;
  std::int64_t mid_static_cpu_reserved_percent = 0;
  std::int64_t mid_static_memory_reserved_percent = 0;
  std::optional<std::int64_t> batch_cpu_threshold_percent;
  std::optional<std::int64_t> batch_memory_threshold_percent;
};

/// One nodeConfigs / nodeStrategies entry's profile: which nodes it is for.
struct NodeCfgProfile {
  std::string name;
  kube::LabelSelector node_selector;
  /// node_selector compiled once at parse (never empty: parsing refuses an empty selector).
  kube::Selector selector;
};

/// colocation-config as written: the cluster strategy's JSON (fields present only) and the
/// nodeConfigs in order, each a profile plus its JSON fields. The JSON is normalised as Go's
/// json.Marshal(json.Unmarshal(text)) would leave it: known fields only, under their canonical
/// names, nulls and Go's omitempty zero values dropped, durations and quantities canonical.
struct ColocationConfig {
  boost::json::object cluster;
  std::vector<std::pair<NodeCfgProfile, boost::json::object>> node_configs;
};

/// Parses and validates colocation-config; an error names the field ("nodeConfigs[1]
/// .cpuReclaimThresholdPercent: must be >= 0"), not the key. The empty string and JSON null are
/// the defaults. As Go's encoding/json: unknown fields are ignored, field names match
/// case-insensitively when no exact match exists, and a JSON type mismatch is an error. Refused
/// as Koordinator's validating webhook refuses them: values out of their range, unknown
/// calculate or memory-collect policies, a nodeConfig without a nodeSelector (or with an empty
/// or invalid one), and text longer than a ConfigMap may hold (kMaxConfigMapValueBytes).
kube::Expected<ColocationConfig> parseColocationConfig(std::string_view json);

/// The strategy for one node: defaults <- cluster <- first nodeConfig whose nodeSelector
/// matches `node_labels` <- the node's colocation-strategy annotation (ignored as a whole, and
/// logged at -v=5 as Koordinator does, when malformed, out of range or longer than an
/// annotation may be) <- its
/// cpu/memory-reclaim-ratio and mid-static-*-reserved-ratio labels (a float ratio, x100 and
/// truncated to a percent; a label that is not a non-negative number, or is longer than a label
/// value may be, is ignored).
ColocationStrategy colocationStrategyForNode(const ColocationConfig& config,
                                             const kube::Labels& node_labels,
                                             const kube::Labels& node_annotations);

/// The keys shaped {clusterStrategy:{...}, nodeStrategies:[{name, nodeSelector, ...}]}:
/// resource-threshold-config, resource-qos-config, cpu-burst-config, system-config.
struct NodeStrategyConfig {
  boost::json::object cluster;
  std::vector<std::pair<NodeCfgProfile, boost::json::object>> node_strategies;
};

/// Parses and validates one of the keys above (the rules of parseColocationConfig; ranges from
/// Koordinator's validate tags, and each "upper > lower" pair such as
/// memoryEvictThresholdPercent > memoryEvictLowerPercent when both are set in one object);
/// the empty string is the defaults. An error names the field, not the key; any other key is
/// an error.
kube::Expected<NodeStrategyConfig> parseNodeStrategyConfig(std::string_view key,
                                                           std::string_view json);

/// What only the ConfigMap webhook refuses, beyond parsing: with `check_names`
/// (--node-strategy-name-need-check) every entry needs a name and no two may share one; and no
/// two entries may select one node, found as Koordinator does by building a node from each
/// selector's matchLabels and each combination of its matchExpressions' values. `list_field` is
/// "nodeConfigs" or "nodeStrategies", for the message.
boost::system::result<void, kube::Error> checkNodeProfiles(
    std::string_view list_field,
    const std::vector<std::pair<NodeCfgProfile, boost::json::object>>& entries, bool check_names);

/// Koordinator's default strategy object for `key` (as NodeSLO carries it when nothing is set);
/// for colocation-config the default ColocationStrategy; empty for any other key.
boost::json::object defaultStrategy(std::string_view key);

/// defaults <- clusterStrategy <- the first matching nodeStrategy, merged as Koordinator's
/// MergeCfg does (structs field by field, maps key by key, lists and scalars replaced), without
/// name/nodeSelector.
boost::json::object strategyForNode(std::string_view key, const NodeStrategyConfig& config,
                                    const kube::Labels& node_labels);

/// The whole ConfigMap, each key parsed; keys that are absent hold their defaults.
struct SloControllerConfig {
  ColocationConfig colocation;
  NodeStrategyConfig resource_threshold;
  NodeStrategyConfig resource_qos;
  NodeStrategyConfig cpu_burst;
  NodeStrategyConfig system;
};

/// Every known key of `data` parsed; the first error names the key and field
/// ("colocation-config: nodeConfigs[1].cpuReclaimThresholdPercent: must be >= 0"). Keys other
/// than the five above are ignored (other components own them).
kube::Expected<SloControllerConfig> parseSloControllerConfig(
    const std::map<std::string, std::string, std::less<>>& data);

/// A NodeSLO's spec for a node: resourceUsedThresholdWithBE, resourceQOSStrategy,
/// cpuBurstStrategy and systemStrategy, each strategyForNode(). (Koordinator's extensions and
/// hostApplications, and the node's total-bandwidth annotation, are not part of it yet.)
boost::json::object nodeSLOSpec(const SloControllerConfig& config, const kube::Labels& node_labels);

}  // namespace koord::apis
