// LowNodeLoadArgs as Koordinator's descheduler v1alpha2 spells them: strict decoding, its
// defaults, its validation, and the node pools the plugin runs (the top-level fields first).
#pragma once

#include <boost/json/fwd.hpp>

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "framework/plugin.h"
#include "koord/core/expected.h"
#include "koord/kube/labels.h"
#include "plugins/lownodeload/utilization.h"

namespace koord::roles::descheduler::lownodeload {

using utilization::Thresholds;
using ResourceWeights = std::map<std::string, std::int64_t, std::less<>>;

/// How many passes over the high thresholds make a node abnormal, and back.
struct LoadAnomalyCondition {
  std::chrono::nanoseconds timeout = std::chrono::minutes(1);
  std::uint32_t consecutive_abnormalities = 5;
  std::uint32_t consecutive_normalities = 3;
};

/// One nodePools entry once defaulted from the top-level fields.
struct NodePool {
  std::string name;
  /// Absent: every node the pass gives the plugin.
  std::optional<kube::LabelSelector> node_selector;
  bool use_deviation_thresholds = false;
  Thresholds high_thresholds, low_thresholds;
  Thresholds prod_high_thresholds, prod_low_thresholds;
  ResourceWeights resource_weights;
  LoadAnomalyCondition anomaly_condition;
};

struct PodSelector {
  std::string name;
  std::optional<kube::LabelSelector> selector;
};

/// The pool Koordinator builds from the top-level thresholds has this name.
inline constexpr std::string_view kDefaultPoolName = "__default_node_pool__";

struct LowNodeLoadArgs final : PluginArgs {
  bool paused = false;
  bool dry_run = false;
  std::int32_t number_of_nodes = 0;
  std::int64_t node_metric_expiration_seconds = 180;
  std::optional<utilization::Namespaces> evictable_namespaces;
  std::vector<PodSelector> pod_selectors;
  bool node_fit = true;
  std::chrono::nanoseconds detector_cache_timeout = std::chrono::minutes(5);
  /// The top-level fields as the first pool (named kDefaultPoolName), then nodePools, each
  /// with what it leaves unset taken from the top level.
  std::vector<NodePool> pools;
};

/// Decodes pluginConfig args (null or absent: the defaults). Unknown members, wrong JSON types,
/// and values Koordinator's validation refuses are errors naming the field.
Expected<LowNodeLoadArgs> decodeLowNodeLoadArgs(const boost::json::value* args);

}  // namespace koord::roles::descheduler::lownodeload
