#include "koord/apis/slo_config.h"

#include <boost/json.hpp>

#include <charconv>
#include <cmath>
#include <exception>
#include <set>
#include <utility>

#include <fmt/format.h>

#include "koord/apis/extension.h"
#include "koord/apis/input_limits.h"
#include "koord/core/duration.h"
#include "koord/core/log.h"
#include "koord/kube/decode.h"
#include "slo_schema.h"

namespace koord::apis {

namespace json = boost::json;
using detail::childPath;
using detail::equalFold;
using detail::Schema;

namespace {

using NodeEntries = std::vector<std::pair<NodeCfgProfile, json::object>>;

// The text as JSON, or an error saying where it broke (line and column, 1-based).
kube::Expected<json::value> parseText(std::string_view text) {
  json::stream_parser parser;
  boost::system::error_code ec;
  std::size_t consumed = parser.write(text.data(), text.size(), ec);
  if (!ec)
    parser.finish(ec);
  if (ec) {
    std::size_t line = 1;
    std::size_t column = 1;
    for (std::size_t i = 0; i < consumed && i < text.size(); ++i) {
      if (text[i] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    return kube::makeKubeError(
        fmt::format("invalid JSON at line {} column {}: {}", line, column, ec.message()));
  }
  return parser.release();
}

// A top-level member by Go's rule (exact name, else case-insensitive); nullptr when absent or
// null. Of several keys naming it, the last wins.
const json::value* member(const json::object& o, std::string_view name) {
  const json::value* exact = nullptr;
  const json::value* folded = nullptr;
  for (const auto& [k, v] : o) {
    if (k == name)
      exact = &v;
    else if (equalFold(k, name))
      folded = &v;
  }
  const json::value* v = exact != nullptr ? exact : folded;
  return (v == nullptr || v->is_null()) ? nullptr : v;
}

// One nodeConfigs/nodeStrategies entry: its profile (name, nodeSelector) and the strategy
// fields that share its object.
kube::Expected<std::pair<NodeCfgProfile, json::object>> parseNodeEntry(const json::value& v,
                                                                       const std::string& path,
                                                                       const Schema& schema) {
  static const json::object kEmpty;
  if (!v.is_null() && !v.is_object())
    return detail::typeError(path, "object", v);
  const json::object& o = v.is_object() ? v.get_object() : kEmpty;

  NodeCfgProfile profile;
  if (const json::value* name = member(o, "name")) {
    if (!name->is_string())
      return detail::typeError(childPath(path, "name"), "string", *name);
    profile.name = std::string(name->get_string());
  }
  std::string selector_path = childPath(path, "nodeSelector");
  const json::value* sel = member(o, "nodeSelector");
  if (sel == nullptr) {
    return kube::makeKubeError(
        fmt::format("{}: required, with matchLabels or matchExpressions", selector_path));
  }
  auto decoded = kube::decodeLabelSelector(*sel, selector_path);
  if (!decoded)
    return decoded.error();
  if (decoded->match_labels.empty() && decoded->match_expressions.empty()) {
    return kube::makeKubeError(
        fmt::format("{}: must not be empty: set matchLabels or matchExpressions", selector_path));
  }
  auto compiled = kube::toSelector(*decoded);
  if (!compiled)
    return kube::makeKubeError(fmt::format("{}: {}", selector_path, compiled.error().message));
  profile.node_selector = std::move(*decoded);
  profile.selector = std::move(*compiled);

  auto strategy = detail::normalize(schema, o, path);
  if (!strategy)
    return strategy.error();
  return std::pair{std::move(profile), std::move(*strategy)};
}

kube::Expected<NodeEntries> parseNodeEntries(const json::object& top, std::string_view list_field,
                                             const Schema& schema) {
  NodeEntries out;
  const json::value* list = member(top, list_field);
  if (list == nullptr)
    return out;
  if (!list->is_array())
    return detail::typeError(list_field, "array", *list);
  for (std::size_t i = 0; i < list->get_array().size(); ++i) {
    auto entry = parseNodeEntry(list->get_array()[i], fmt::format("{}[{}]", list_field, i), schema);
    if (!entry)
      return entry.error();
    out.push_back(std::move(*entry));
  }
  return out;
}

// The top-level object of a key's text; nullopt for "" and null (the defaults). Text longer
// than `limit` is refused before it is parsed.
kube::Expected<std::optional<json::object>> topObject(std::string_view text, std::size_t limit) {
  if (text.empty())
    return std::optional<json::object>();
  if (auto size = checkValueSize("value", text, limit); !size)
    return size.error();
  auto v = parseText(text);
  if (!v)
    return v.error();
  if (v->is_null())
    return std::optional<json::object>();
  if (!v->is_object())
    return detail::typeError("", "a JSON object", *v);
  return std::optional<json::object>(std::move(v->get_object()));
}

const Schema* strategySchema(std::string_view key) {
  if (key == kResourceThresholdConfigKey)
    return &detail::kResourceThresholdStrategySchema;
  if (key == kResourceQOSConfigKey)
    return &detail::kResourceQOSStrategySchema;
  if (key == kCPUBurstConfigKey)
    return &detail::kCPUBurstStrategySchema;
  if (key == kSystemConfigKey)
    return &detail::kSystemStrategySchema;
  if (key == kColocationConfigKey)
    return &detail::kColocationStrategySchema;
  return nullptr;
}

json::object colocationStrategyToJson(const ColocationStrategy& s) {
  json::array durations;
  for (auto d : s.metric_aggregate_durations)
    durations.emplace_back(formatGoDuration(d));
  json::object o{
      {"enable", s.enable},
      {"metricAggregateDurationSeconds", s.metric_aggregate_duration_seconds},
      {"metricReportIntervalSeconds", s.metric_report_interval_seconds},
      {"metricAggregatePolicy", json::object{{"durations", std::move(durations)}}},
      {"metricMemoryCollectPolicy", s.metric_memory_collect_policy},
      {"cpuReclaimThresholdPercent", s.cpu_reclaim_threshold_percent},
      {"cpuCalculatePolicy", calculatePolicyName(s.cpu_calculate_policy)},
      {"memoryReclaimThresholdPercent", s.memory_reclaim_threshold_percent},
      {"memoryCalculatePolicy", calculatePolicyName(s.memory_calculate_policy)},
      {"degradeTimeMinutes", s.degrade_time_minutes},
      {"updateTimeThresholdSeconds", s.update_time_threshold_seconds},
      {"resourceDiffThreshold", s.resource_diff_threshold},
      {"midCPUThresholdPercent", s.mid_cpu_threshold_percent},
      {"midMemoryThresholdPercent", s.mid_memory_threshold_percent},
      {"midUnallocatedPercent", s.mid_unallocated_percent},
      {"midStaticCPUReservedPercent", s.mid_static_cpu_reserved_percent},
      {"midStaticMemoryReservedPercent", s.mid_static_memory_reserved_percent},
  };
  // Unset in Koordinator's defaults (nil pointers), so absent rather than empty or zero.
  if (!s.mid_reclaim_mode.empty())
    o["midReclaimMode"] = s.mid_reclaim_mode;
  if (s.batch_cpu_threshold_percent)
    o["batchCPUThresholdPercent"] = *s.batch_cpu_threshold_percent;
  if (s.batch_memory_threshold_percent)
    o["batchMemoryThresholdPercent"] = *s.batch_memory_threshold_percent;
  return o;
}

// Reads back a merged, normalised strategy: every value was checked at parse, so a field of
// the wrong kind cannot occur; the default is kept if one did.
ColocationStrategy colocationStrategyFromJson(const json::object& o) {
  ColocationStrategy s;
  auto i64 = [&](std::string_view name, std::int64_t& target) {
    if (const json::value* v = o.if_contains(name); v != nullptr && v->is_int64())
      target = v->get_int64();
  };
  auto str = [&](std::string_view name, std::string& target) {
    if (const json::value* v = o.if_contains(name); v != nullptr && v->is_string())
      target = std::string(v->get_string());
  };
  auto policy = [&](std::string_view name, CalculatePolicy& target) {
    if (const json::value* v = o.if_contains(name); v != nullptr && v->is_string()) {
      if (auto p = calculatePolicyByName(v->get_string()))
        target = *p;
    }
  };
  auto optional = [&](std::string_view name, std::optional<std::int64_t>& target) {
    if (const json::value* v = o.if_contains(name); v != nullptr && v->is_int64())
      target = v->get_int64();
  };
  if (const json::value* v = o.if_contains("enable"); v != nullptr && v->is_bool())
    s.enable = v->get_bool();
  i64("metricAggregateDurationSeconds", s.metric_aggregate_duration_seconds);
  i64("metricReportIntervalSeconds", s.metric_report_interval_seconds);
  if (const json::value* p = o.if_contains("metricAggregatePolicy");
      p != nullptr && p->is_object()) {
    if (const json::value* d = p->get_object().if_contains("durations");
        d != nullptr && d->is_array()) {
      s.metric_aggregate_durations.clear();
      for (const auto& e : d->get_array()) {
        if (!e.is_string())
          continue;
        if (auto parsed = parseGoDuration(e.get_string()))
          s.metric_aggregate_durations.push_back(
              std::chrono::duration_cast<std::chrono::seconds>(*parsed));
      }
    }
  }
  str("metricMemoryCollectPolicy", s.metric_memory_collect_policy);
  i64("cpuReclaimThresholdPercent", s.cpu_reclaim_threshold_percent);
  policy("cpuCalculatePolicy", s.cpu_calculate_policy);
  i64("memoryReclaimThresholdPercent", s.memory_reclaim_threshold_percent);
  policy("memoryCalculatePolicy", s.memory_calculate_policy);
  i64("degradeTimeMinutes", s.degrade_time_minutes);
  i64("updateTimeThresholdSeconds", s.update_time_threshold_seconds);
  if (const json::value* v = o.if_contains("resourceDiffThreshold"); v != nullptr && v->is_number())
    s.resource_diff_threshold = v->to_number<double>();
  str("midReclaimMode", s.mid_reclaim_mode);
  i64("midCPUThresholdPercent", s.mid_cpu_threshold_percent);
  i64("midMemoryThresholdPercent", s.mid_memory_threshold_percent);
  i64("midUnallocatedPercent", s.mid_unallocated_percent);
  i64("midStaticCPUReservedPercent", s.mid_static_cpu_reserved_percent);
  i64("midStaticMemoryReservedPercent", s.mid_static_memory_reserved_percent);
  optional("batchCPUThresholdPercent", s.batch_cpu_threshold_percent);
  optional("batchMemoryThresholdPercent", s.batch_memory_threshold_percent);
  // Koordinator's batch CPU formula knows only usage and maxUsageRequest.
  if (s.cpu_calculate_policy == CalculatePolicy::kRequest)
    s.cpu_calculate_policy = CalculatePolicy::kUsage;
  return s;
}

// A reclaim-ratio label as a percent: strconv.ParseFloat, refused when negative (and here also
// when not finite or too large for int64), then int64(v * 100), truncating as Go does.
std::optional<std::int64_t> ratioLabelPercent(const kube::Labels& labels, std::string_view key) {
  auto it = labels.find(key);
  if (it == labels.end())
    return std::nullopt;
  std::string_view text = it->second;
  if (text.size() > kMaxLabelValueBytes) {
    KOORD_VLOG(5, "ignoring node label {}: {} bytes, longer than a label value may be", key,
               text.size());
    return std::nullopt;
  }
  if (!text.empty() && text.front() == '+')
    text.remove_prefix(1);
  double v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(v) || v < 0 ||
      v * 100 >= 9.2e18) {
    KOORD_VLOG(5, "ignoring node label {}=\"{}\": not a non-negative ratio", key, it->second);
    return std::nullopt;
  }
  return static_cast<std::int64_t>(v * 100);
}

json::object resourceQOSClassDefaults(int group_identity, bool core_expeller, int cat_end,
                                      int wmark_ratio, int wmark_scale_permill, int wmark_min_adj) {
  return json::object{
      {"cpuQOS",
       {{"enable", false},
        {"groupIdentity", group_identity},
        {"schedIdle", 0},
        {"coreExpeller", core_expeller}}},
      {"memoryQOS",
       {{"enable", false},
        {"minLimitPercent", 0},
        {"lowLimitPercent", 0},
        {"throttlingPercent", 0},
        {"wmarkRatio", wmark_ratio},
        {"wmarkScalePermill", wmark_scale_permill},
        {"wmarkMinAdj", wmark_min_adj},
        {"priorityEnable", 0},
        {"priority", 0},
        {"oomKillGroup", 0}}},
      {"blkioQOS", {{"enable", false}}},
      {"resctrlQOS",
       {{"enable", false},
        {"catRangeStartPercent", 0},
        {"catRangeEndPercent", cat_end},
        {"mbaPercent", 100}}},
      {"networkQOS",
       {{"enable", false},
        {"ingressRequest", 0},
        {"ingressLimit", 0},
        {"egressRequest", 0},
        {"egressLimit", 0}}},
  };
}

kube::Error withKey(std::string_view key, const kube::Error& e) {
  return kube::Error(fmt::format("{}: {}", key, e.message), e.code);
}

kube::Error internalError(std::string_view what, const std::exception& e) {
  return kube::makeKubeError(fmt::format("{}: {}", what, e.what()));
}

// Koordinator's generateNodesByNodeSelector: the matchLabels, plus for the i-th node the
// (i mod n)-th value of each expression with n values, over as many nodes as the product of
// those counts.
std::vector<kube::Labels> virtualNodes(const kube::LabelSelector& s) {
  std::size_t count = 1;
  for (const auto& e : s.match_expressions) {
    if (!e.values.empty())
      count *= e.values.size();
  }
  std::vector<kube::Labels> nodes(count, s.match_labels);
  for (const auto& e : s.match_expressions) {
    if (e.values.empty())
      continue;
    for (std::size_t i = 0; i < nodes.size(); ++i)
      nodes[i][e.key] = e.values[i % e.values.size()];
  }
  return nodes;
}

}  // namespace

std::string_view calculatePolicyName(CalculatePolicy p) {
  switch (p) {
    case CalculatePolicy::kUsage:
      return "usage";
    case CalculatePolicy::kRequest:
      return "request";
    case CalculatePolicy::kMaxUsageRequest:
      return "maxUsageRequest";
  }
  return "usage";
}

std::optional<CalculatePolicy> calculatePolicyByName(std::string_view name) {
  if (name == "usage")
    return CalculatePolicy::kUsage;
  if (name == "request")
    return CalculatePolicy::kRequest;
  if (name == "maxUsageRequest")
    return CalculatePolicy::kMaxUsageRequest;
  return std::nullopt;
}

kube::Expected<ColocationConfig> parseColocationConfig(std::string_view text) try {
  ColocationConfig out;
  auto top = topObject(text, kMaxConfigMapValueBytes);
  if (!top)
    return top.error();
  if (!*top)
    return out;
  auto cluster = detail::normalize(detail::kColocationStrategySchema, **top, "");
  if (!cluster)
    return cluster.error();
  out.cluster = std::move(*cluster);
  auto nodes = parseNodeEntries(**top, "nodeConfigs", detail::kColocationStrategySchema);
  if (!nodes)
    return nodes.error();
  out.node_configs = std::move(*nodes);
  return out;
} catch (const std::exception& e) {
  return internalError("parsing colocation-config", e);
}

ColocationStrategy colocationStrategyForNode(const ColocationConfig& config,
                                             const kube::Labels& node_labels,
                                             const kube::Labels& node_annotations) {
  const Schema& schema = detail::kColocationStrategySchema;
  json::object merged = defaultStrategy(kColocationConfigKey);
  detail::merge(merged, config.cluster, schema);
  for (const auto& [profile, strategy] : config.node_configs) {
    if (profile.selector.matches(node_labels)) {
      detail::merge(merged, strategy, schema);
      break;
    }
  }
  if (auto it = node_annotations.find(kAnnotationNodeColocationStrategy);
      it != node_annotations.end()) {
    // Koordinator ignores an annotation it cannot unmarshal; one out of range is ignored too,
    // since nothing (no webhook) checked it.
    auto on_node = [&]() -> kube::Expected<json::object> {
      auto top = topObject(it->second, kMaxAnnotationValueBytes);
      if (!top)
        return top.error();
      if (!*top)
        return json::object();
      return detail::normalize(schema, **top, "");
    }();
    if (on_node) {
      detail::merge(merged, *on_node, schema);
    } else {
      KOORD_VLOG(5, "ignoring node annotation {}: {}", kAnnotationNodeColocationStrategy,
                 on_node.error().message);
    }
  }
  ColocationStrategy s = colocationStrategyFromJson(merged);
  if (auto p = ratioLabelPercent(node_labels, kLabelCPUReclaimRatio))
    s.cpu_reclaim_threshold_percent = *p;
  if (auto p = ratioLabelPercent(node_labels, kLabelMemoryReclaimRatio))
    s.memory_reclaim_threshold_percent = *p;
  if (auto p = ratioLabelPercent(node_labels, kLabelMidStaticCPUReservedRatio))
    s.mid_static_cpu_reserved_percent = *p;
  if (auto p = ratioLabelPercent(node_labels, kLabelMidStaticMemoryReservedRatio))
    s.mid_static_memory_reserved_percent = *p;
  return s;
}

kube::Expected<NodeStrategyConfig> parseNodeStrategyConfig(std::string_view key,
                                                           std::string_view text) try {
  const Schema* schema = key == kColocationConfigKey ? nullptr : strategySchema(key);
  if (schema == nullptr)
    return kube::makeKubeError(fmt::format("{} is not a clusterStrategy/nodeStrategies key", key));
  NodeStrategyConfig out;
  auto top = topObject(text, kMaxConfigMapValueBytes);
  if (!top)
    return top.error();
  if (!*top)
    return out;
  if (const json::value* cluster = member(**top, "clusterStrategy")) {
    if (!cluster->is_object())
      return detail::typeError("clusterStrategy", "object", *cluster);
    auto normalized = detail::normalize(*schema, cluster->get_object(), "clusterStrategy");
    if (!normalized)
      return normalized.error();
    out.cluster = std::move(*normalized);
  }
  auto nodes = parseNodeEntries(**top, "nodeStrategies", *schema);
  if (!nodes)
    return nodes.error();
  out.node_strategies = std::move(*nodes);
  return out;
} catch (const std::exception& e) {
  return internalError(fmt::format("parsing {}", key), e);
}

boost::system::result<void, kube::Error> checkNodeProfiles(std::string_view list_field,
                                                           const NodeEntries& entries,
                                                           bool check_names) {
  if (check_names) {
    std::set<std::string_view> seen;
    for (std::size_t i = 0; i < entries.size(); ++i) {
      const std::string& name = entries[i].first.name;
      if (name.empty())
        return kube::makeKubeError(fmt::format("{}[{}].name: required", list_field, i));
      if (!seen.insert(name).second) {
        return kube::makeKubeError(
            fmt::format("{}[{}].name: duplicate name \"{}\"", list_field, i, name));
      }
    }
  }
  for (std::size_t i = 0; i < entries.size(); ++i) {
    for (const auto& node : virtualNodes(entries[i].first.node_selector)) {
      for (std::size_t j = 0; j < entries.size(); ++j) {
        if (j != i && entries[j].first.selector.matches(node)) {
          std::size_t a = std::min(i, j);
          std::size_t b = std::max(i, j);
          return kube::makeKubeError(
              fmt::format("{0}[{1}] and {0}[{2}]: nodeSelectors overlap (both select a node "
                          "labelled {3})",
                          list_field, a, b, kube::Selector::fromSet(node).toString()));
        }
      }
    }
  }
  return {};
}

json::object defaultStrategy(std::string_view key) {
  if (key == kColocationConfigKey)
    return colocationStrategyToJson(ColocationStrategy{});
  if (key == kResourceThresholdConfigKey) {
    return json::object{
        {"enable", false},
        {"cpuSuppressThresholdPercent", 65},
        {"cpuSuppressPolicy", "cpuset"},
        {"memoryEvictThresholdPercent", 70},
        {"cpuEvictPolicy", "evictByRealLimit"},
    };
  }
  if (key == kResourceQOSConfigKey) {
    return json::object{
        {"policies", {{"cpuPolicy", "groupIdentity"}, {"netQOSPolicy", "tc"}}},
        {"lsrClass", resourceQOSClassDefaults(2, true, 100, 95, 20, -25)},
        {"lsClass", resourceQOSClassDefaults(2, true, 100, 95, 20, -25)},
        {"beClass", resourceQOSClassDefaults(-1, false, 30, 95, 20, 50)},
        {"systemClass", resourceQOSClassDefaults(0, false, 100, 0, 50, 0)},
        {"cgroupRoot", {{"blkioQOS", {{"enable", false}}}}},
    };
  }
  if (key == kCPUBurstConfigKey) {
    return json::object{
        {"policy", "none"},
        {"cpuBurstPercent", 1000},
        {"cfsQuotaBurstPercent", 300},
        {"cfsQuotaBurstPeriodSeconds", -1},
        {"sharePoolThresholdPercent", 50},
    };
  }
  if (key == kSystemConfigKey)
    return json::object{{"totalNetworkBandwidth", "0"}};
  return {};
}

json::object strategyForNode(std::string_view key, const NodeStrategyConfig& config,
                             const kube::Labels& node_labels) {
  const Schema* schema = strategySchema(key);
  json::object merged = defaultStrategy(key);
  if (schema == nullptr)
    return merged;
  detail::merge(merged, config.cluster, *schema);
  for (const auto& [profile, strategy] : config.node_strategies) {
    if (profile.selector.matches(node_labels)) {
      detail::merge(merged, strategy, *schema);
      break;
    }
  }
  return merged;
}

kube::Expected<SloControllerConfig> parseSloControllerConfig(
    const std::map<std::string, std::string, std::less<>>& data) {
  SloControllerConfig out;
  auto text = [&](std::string_view key) -> std::string_view {
    auto it = data.find(key);
    return it == data.end() ? std::string_view() : std::string_view(it->second);
  };
  auto colocation = parseColocationConfig(text(kColocationConfigKey));
  if (!colocation)
    return withKey(kColocationConfigKey, colocation.error());
  out.colocation = std::move(*colocation);
  const std::pair<std::string_view, NodeStrategyConfig*> keys[] = {
      {kResourceThresholdConfigKey, &out.resource_threshold},
      {kResourceQOSConfigKey, &out.resource_qos},
      {kCPUBurstConfigKey, &out.cpu_burst},
      {kSystemConfigKey, &out.system},
  };
  for (const auto& [key, target] : keys) {
    auto parsed = parseNodeStrategyConfig(key, text(key));
    if (!parsed)
      return withKey(key, parsed.error());
    *target = std::move(*parsed);
  }
  return out;
}

json::object nodeSLOSpec(const SloControllerConfig& config, const kube::Labels& node_labels) {
  return json::object{
      {"resourceUsedThresholdWithBE",
       strategyForNode(kResourceThresholdConfigKey, config.resource_threshold, node_labels)},
      {"resourceQOSStrategy",
       strategyForNode(kResourceQOSConfigKey, config.resource_qos, node_labels)},
      {"cpuBurstStrategy", strategyForNode(kCPUBurstConfigKey, config.cpu_burst, node_labels)},
      {"systemStrategy", strategyForNode(kSystemConfigKey, config.system, node_labels)},
  };
}

}  // namespace koord::apis
