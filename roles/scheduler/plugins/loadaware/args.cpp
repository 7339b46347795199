#include "plugins/loadaware/args.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <boost/json.hpp>

#include <array>
#include <limits>

#include "koord/core/duration.h"
#include "koord/kube/json_fields.h"

namespace koord::roles::scheduler::loadaware {

namespace json = boost::json;
namespace jf = kube::jsonfields;
using kube::Expected;
using kube::makeKubeError;

namespace {

constexpr std::array<std::string_view, 5> kAggregationTypes = {"avg", "p50", "p90", "p95", "p99"};

std::string entryPath(std::string_view path, std::string_view key) {
  return fmt::format("{}[{}]", path, key);
}

kube::Error unknownField(std::string_view path, std::string_view key) {
  if (path.empty())
    return makeKubeError(fmt::format("unknown field \"{}\"", key));
  return makeKubeError(fmt::format("{}: unknown field \"{}\"", path, key));
}

// The Go types are int64: a fraction, or a number beyond int64, does not decode.
Expected<std::int64_t> readInt(const json::value& v, std::string_view path) {
  if (v.is_int64())
    return v.get_int64();
  if (v.is_uint64()) {
    if (v.get_uint64() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
      return makeKubeError(fmt::format("{}: {} overflows int64", path, v.get_uint64()));
    return static_cast<std::int64_t>(v.get_uint64());
  }
  return jf::typeError(path, "integer", v);
}

Expected<bool> readBool(const json::value& v, std::string_view path) {
  if (!v.is_bool())
    return jf::typeError(path, "boolean", v);
  return v.get_bool();
}

Expected<std::string> readString(const json::value& v, std::string_view path) {
  if (!v.is_string())
    return jf::typeError(path, "string", v);
  return std::string(v.get_string());
}

Expected<ResourceFactors> readFactors(const json::value& v, std::string_view path) {
  if (!v.is_object())
    return jf::typeError(path, "object", v);
  ResourceFactors out;
  for (const auto& member : v.get_object()) {
    // Go stores a null entry as zero, which disables a threshold.
    std::int64_t n = 0;
    if (!member.value().is_null()) {
      auto r = readInt(member.value(), entryPath(path, member.key()));
      if (!r)
        return r.error();
      n = *r;
    }
    out[std::string(member.key())] = n;
  }
  return out;
}

Expected<std::chrono::nanoseconds> readDuration(const json::value& v, std::string_view path) {
  if (!v.is_string())
    return jf::typeError(path, "duration string", v);
  auto d = parseGoDuration(v.get_string());
  if (!d)
    return makeKubeError(
        fmt::format("{}: invalid duration \"{}\"", path, std::string_view(v.get_string())));
  return *d;
}

Expected<std::vector<std::string>> readStrings(const json::value& v, std::string_view path) {
  if (!v.is_array())
    return jf::typeError(path, "array", v);
  std::vector<std::string> out;
  const auto& a = v.get_array();
  for (std::size_t i = 0; i < a.size(); ++i) {
    auto s = readString(a[i], jf::indexPath(path, i));
    if (!s)
      return s.error();
    out.push_back(std::move(*s));
  }
  return out;
}

// Assigns a decoded field or hands its error back; keeps the field tables below one line each.
template <typename T, typename Reader>
std::optional<kube::Error> assign(T& target, Reader read, const json::value& v,
                                  std::string_view path) {
  auto r = read(v, path);
  if (!r)
    return r.error();
  target = std::move(*r);
  return std::nullopt;
}

Expected<LoadAwareSchedulingAggregatedArgs> readAggregated(const json::value& v,
                                                           std::string_view path) {
  if (!v.is_object())
    return jf::typeError(path, "object", v);
  LoadAwareSchedulingAggregatedArgs out;
  for (const auto& member : v.get_object()) {
    const std::string_view key = member.key();
    const json::value& value = member.value();
    if (value.is_null())
      continue;
    const std::string p = jf::childPath(path, key);
    std::optional<kube::Error> err;
    if (key == "usageThresholds")
      err = assign(out.usage_thresholds, readFactors, value, p);
    else if (key == "usageAggregationType")
      err = assign(out.usage_aggregation_type, readString, value, p);
    else if (key == "usageAggregatedDuration")
      err = assign(out.usage_aggregated_duration, readDuration, value, p);
    else if (key == "scoreAggregationType")
      err = assign(out.score_aggregation_type, readString, value, p);
    else if (key == "scoreAggregatedDuration")
      err = assign(out.score_aggregated_duration, readDuration, value, p);
    else
      return unknownField(path, key);
    if (err)
      return *err;
  }
  return out;
}

std::optional<kube::Error> decodeField(LoadAwareSchedulingArgs& a, std::string_view key,
                                       const json::value& v) {
  const std::string_view p = key;  // top-level fields are named bare, as the Go field tags are
  if (key == "apiVersion") {
    auto version = readString(v, p);
    return version ? std::nullopt : std::optional(version.error());
  }
  if (key == "kind") {
    auto kind = readString(v, p);
    if (!kind)
      return kind.error();
    if (*kind != kArgsKind)
      return makeKubeError(fmt::format("kind: expected \"{}\", got \"{}\"", kArgsKind, *kind));
    return std::nullopt;
  }
  if (key == "filterExpiredNodeMetrics")
    return assign(a.filter_expired_node_metrics, readBool, v, p);
  if (key == "nodeMetricExpirationSeconds")
    return assign(a.node_metric_expiration_seconds, readInt, v, p);
  if (key == "enableScheduleWhenNodeMetricsExpired")
    return assign(a.enable_schedule_when_node_metrics_expired, readBool, v, p);
  if (key == "resourceWeights")
    return assign(a.resource_weights, readFactors, v, p);
  if (key == "dominantResourceWeight")
    return assign(a.dominant_resource_weight, readInt, v, p);
  if (key == "usageThresholds")
    return assign(a.usage_thresholds, readFactors, v, p);
  if (key == "prodUsageThresholds")
    return assign(a.prod_usage_thresholds, readFactors, v, p);
  if (key == "prodUsageIncludeSys")
    return assign(a.prod_usage_include_sys, readBool, v, p);
  if (key == "scoreAccordingProdUsage")
    return assign(a.score_according_prod_usage, readBool, v, p);
  if (key == "estimator")
    return assign(a.estimator, readString, v, p);
  if (key == "estimatedScalingFactors")
    return assign(a.estimated_scaling_factors, readFactors, v, p);
  if (key == "estimatedSecondsAfterPodScheduled")
    return assign(a.estimated_seconds_after_pod_scheduled, readInt, v, p);
  if (key == "estimatedSecondsAfterInitialized")
    return assign(a.estimated_seconds_after_initialized, readInt, v, p);
  if (key == "allowCustomizeEstimation")
    return assign(a.allow_customize_estimation, readBool, v, p);
  if (key == "aggregated")
    return assign(a.aggregated, readAggregated, v, p);
  if (key == "supportedResources")
    return assign(a.supported_resources, readStrings, v, p);
  return unknownField("", key);
}

// field.Error's shape: "<path>: Invalid value: <value>: <detail>".
std::string invalid(std::string_view path, std::int64_t value, std::string_view detail) {
  return fmt::format("{}: Invalid value: {}: {}", path, value, detail);
}

void checkRange(std::vector<std::string>& errs, const ResourceFactors& factors,
                std::string_view path, std::int64_t min, std::int64_t max) {
  for (const auto& [name, value] : factors) {
    if (value < min)
      errs.push_back(invalid(entryPath(path, name), value,
                             min > 0 ? "should be a positive value" : "should not be negative"));
    else if (value > max)
      errs.push_back(
          invalid(entryPath(path, name), value, fmt::format("should be at most {}", max)));
  }
}

void checkAggregationType(std::vector<std::string>& errs, std::string_view type,
                          std::string_view path) {
  if (type.empty())
    return;
  for (auto t : kAggregationTypes) {
    if (t == type)
      return;
  }
  errs.push_back(
      fmt::format("{}: Unsupported value: \"{}\": supported values: \"avg\", \"p50\", \"p90\", "
                  "\"p95\", \"p99\"",
                  path, type));
}

void checkDuration(std::vector<std::string>& errs, std::chrono::nanoseconds d,
                   std::string_view path) {
  if (d.count() < 0)
    errs.push_back(
        fmt::format("{}: Invalid value: \"{}\": must be >= 0", path, formatGoDuration(d)));
}

}  // namespace

kube::Expected<LoadAwareSchedulingArgs> decodeLoadAwareSchedulingArgs(
    const boost::json::value* args, std::string_view /*api_version: same defaults in all*/) {
  LoadAwareSchedulingArgs a;
  if (args && !args->is_null()) {
    if (!args->is_object())
      return jf::typeError("args", "object", *args);
    a.resource_weights.clear();
    a.usage_thresholds.clear();
    a.estimated_scaling_factors.clear();
    for (const auto& member : args->get_object()) {
      if (member.value().is_null())
        continue;  // null reads as absent, as Go decodes it into pointers, maps and zero values
      if (auto err = decodeField(a, member.key(), member.value()))
        return *err;
    }
    applyDefaults(a);
  }
  if (auto ok = validateLoadAwareSchedulingArgs(a); !ok)
    return ok.error();
  return a;
}

void applyDefaults(LoadAwareSchedulingArgs& a) {
  const LoadAwareSchedulingArgs defaults;
  if (a.resource_weights.empty() && a.dominant_resource_weight == 0)
    a.resource_weights = defaults.resource_weights;
  if (a.usage_thresholds.empty())
    a.usage_thresholds = defaults.usage_thresholds;
  for (const auto& [name, factor] : defaults.estimated_scaling_factors)
    a.estimated_scaling_factors.emplace(name, factor);  // keeps a configured value
}

kube::Expected<void> validateLoadAwareSchedulingArgs(const LoadAwareSchedulingArgs& a) {
  std::vector<std::string> errs;
  if (a.node_metric_expiration_seconds <= 0)
    errs.push_back(invalid("nodeMetricExpirationSeconds", a.node_metric_expiration_seconds,
                           "should be a positive value"));
  checkRange(errs, a.resource_weights, "resourceWeights", 1, 100);
  if (a.dominant_resource_weight < 0)
    errs.push_back(
        invalid("dominantResourceWeight", a.dominant_resource_weight, "should not be negative"));
  else if (a.dominant_resource_weight > 100)
    errs.push_back(
        invalid("dominantResourceWeight", a.dominant_resource_weight, "should be at most 100"));
  checkRange(errs, a.usage_thresholds, "usageThresholds", 0, 100);
  // Koordinator leaves prod thresholds unchecked; a percentage outside 0..100 is a typo either way.
  checkRange(errs, a.prod_usage_thresholds, "prodUsageThresholds", 0, 100);
  checkRange(errs, a.estimated_scaling_factors, "estimatedScalingFactors", 1, 100);
  // Scoring a resource needs its estimate for the incoming pod.
  for (const auto& [name, weight] : a.resource_weights) {
    if (!a.estimated_scaling_factors.contains(name)) {
      errs.push_back(fmt::format("estimatedScalingFactors: Not found: \"{}\"", name));
      break;
    }
  }
  if (a.aggregated) {
    const auto& agg = *a.aggregated;
    checkRange(errs, agg.usage_thresholds, "aggregated.usageThresholds", 0, 100);
    checkAggregationType(errs, agg.usage_aggregation_type, "aggregated.usageAggregationType");
    checkDuration(errs, agg.usage_aggregated_duration, "aggregated.usageAggregatedDuration");
    checkAggregationType(errs, agg.score_aggregation_type, "aggregated.scoreAggregationType");
    checkDuration(errs, agg.score_aggregated_duration, "aggregated.scoreAggregatedDuration");
  }
  if (errs.empty())
    return {};
  return makeKubeError(fmt::format("{}", fmt::join(errs, "; ")));
}

ResourceVectorizer vectorizerFor(const LoadAwareSchedulingArgs& a) {
  std::vector<std::string> names{std::string(kResourceCPU), std::string(kResourceMemory)};
  auto keys = [&](const ResourceFactors& f) {
    for (const auto& [name, value] : f)
      names.push_back(name);
  };
  keys(a.usage_thresholds);
  keys(a.prod_usage_thresholds);
  if (a.aggregated)
    keys(a.aggregated->usage_thresholds);
  keys(a.resource_weights);
  keys(a.estimated_scaling_factors);
  names.insert(names.end(), a.supported_resources.begin(), a.supported_resources.end());
  return ResourceVectorizer(std::move(names));
}

}  // namespace koord::roles::scheduler::loadaware
