#include "plugins/loadaware/usage_thresholds.h"

#include <fmt/format.h>
#include <boost/json.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>

#include "koord/core/duration.h"
#include "koord/core/log.h"
#include "koord/kube/error.h"

namespace koord::roles::scheduler::loadaware {

namespace json = boost::json;
using kube::Expected;
using kube::makeKubeError;

namespace {

// The annotation is read with Go's encoding/json, which matches field names case-insensitively
// and ignores unknown ones.
bool sameName(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

const json::value* member(const json::object& o, std::string_view name) {
  for (const auto& m : o) {
    if (sameName(m.key(), name))
      return m.value().is_null() ? nullptr : &m.value();
  }
  return nullptr;
}

Expected<ResourceFactors> readThresholds(const json::value& v, std::string_view path) {
  if (!v.is_object())
    return makeKubeError(fmt::format("{}: not an object", path));
  ResourceFactors out;
  for (const auto& m : v.get_object()) {
    if (m.value().is_int64())
      out[std::string(m.key())] = m.value().get_int64();
    else if (m.value().is_null())
      out[std::string(m.key())] = 0;
    else
      return makeKubeError(fmt::format("{}[{}]: not an integer", path, std::string_view(m.key())));
  }
  return out;
}

struct CustomAggregated {
  ResourceFactors thresholds;
  std::string type;
  std::chrono::nanoseconds duration{0};
};

struct CustomThresholds {
  ResourceFactors usage;
  ResourceFactors prod_usage;
  std::optional<CustomAggregated> aggregated;
};

Expected<CustomAggregated> readAggregated(const json::value& v) {
  if (!v.is_object())
    return makeKubeError("aggregatedUsage: not an object");
  const auto& o = v.get_object();
  CustomAggregated out;
  if (const auto* t = member(o, "usageThresholds")) {
    auto r = readThresholds(*t, "aggregatedUsage.usageThresholds");
    if (!r)
      return r.error();
    out.thresholds = std::move(*r);
  }
  if (const auto* t = member(o, "usageAggregationType")) {
    if (!t->is_string())
      return makeKubeError("aggregatedUsage.usageAggregationType: not a string");
    out.type = std::string(t->get_string());
  }
  if (const auto* d = member(o, "usageAggregatedDuration")) {
    std::optional<std::chrono::nanoseconds> parsed;
    if (d->is_string())
      parsed = parseGoDuration(d->get_string());
    if (!parsed)
      return makeKubeError("aggregatedUsage.usageAggregatedDuration: not a duration");
    out.duration = *parsed;
  }
  return out;
}

Expected<CustomThresholds> parseCustomThresholds(std::string_view text) {
  boost::system::error_code ec;
  json::value v = json::parse(text, ec);
  if (ec)
    return makeKubeError(fmt::format("not JSON: {}", ec.message()));
  if (!v.is_object())
    return makeKubeError("not a JSON object");
  const auto& o = v.get_object();
  CustomThresholds out;
  if (const auto* t = member(o, "usageThresholds")) {
    auto r = readThresholds(*t, "usageThresholds");
    if (!r)
      return r.error();
    out.usage = std::move(*r);
  }
  if (const auto* t = member(o, "prodUsageThresholds")) {
    auto r = readThresholds(*t, "prodUsageThresholds");
    if (!r)
      return r.error();
    out.prod_usage = std::move(*r);
  }
  if (const auto* a = member(o, "aggregatedUsage")) {
    auto r = readAggregated(*a);
    if (!r)
      return r.error();
    out.aggregated = std::move(*r);
  }
  return out;
}

}  // namespace

bool withinThreshold(std::int64_t threshold, std::int64_t total, std::int64_t estimated) {
  if (threshold == 0 || total == 0)
    return true;
  const auto usage = static_cast<std::int64_t>(
      std::round(static_cast<double>(estimated) / static_cast<double>(total) * 100));
  return usage <= threshold;
}

std::int64_t usageLimit(std::int64_t threshold, std::int64_t total) {
  if (threshold == 0 || total == 0)
    return kExactRange;
  if (total < 0)
    return kUseFormula;
  auto passes = [&](std::int64_t estimated) {
    return withinThreshold(threshold, total, estimated);
  };
  if (!passes(0))
    return -1;
  if (passes(kExactRange))
    return kExactRange;
  // Keep passes(lo) and !passes(hi); start around the real-valued boundary, widening until
  // floating-point rounding is surely inside, then bisect.
  std::int64_t lo = 0;
  std::int64_t hi = kExactRange;
  const double guess = (static_cast<double>(threshold) + 0.5) * static_cast<double>(total) / 100;
  if (guess > 0 && guess < static_cast<double>(kExactRange)) {
    const auto g = static_cast<std::int64_t>(guess);
    for (std::int64_t step = 1; step < kExactRange; step *= 2) {
      const std::int64_t l = std::max<std::int64_t>(0, g - step);
      const std::int64_t h = std::min(kExactRange, g + step);
      if (passes(l) && !passes(h)) {
        lo = l;
        hi = h;
        break;
      }
    }
  }
  while (hi - lo > 1) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    (passes(mid) ? lo : hi) = mid;
  }
  return lo;
}

UsageThresholdsProfile profileFromArgs(const LoadAwareSchedulingArgs& args,
                                       const ResourceVectorizer& vectorizer) {
  UsageThresholdsProfile p;
  p.usage = vectorizer.fromFactors(args.usage_thresholds);
  p.prod_usage = vectorizer.fromFactors(args.prod_usage_thresholds);
  if (const auto& agg = args.aggregated;
      agg && !agg->usage_thresholds.empty() && !agg->usage_aggregation_type.empty()) {
    p.aggregated =
        AggregatedUsageProfile{vectorizer.fromFactors(agg->usage_thresholds),
                               agg->usage_aggregation_type, agg->usage_aggregated_duration};
  }
  return p;
}

std::optional<UsageThresholdsProfile> nodeProfile(const UsageThresholdsProfile& base,
                                                  const Node& node,
                                                  const ResourceVectorizer& vectorizer) {
  auto it = node.annotations.find(kAnnotationCustomUsageThresholds);
  if (it == node.annotations.end())
    return std::nullopt;
  auto custom = parseCustomThresholds(it->second);
  if (!custom) {
    KOORD_VLOG(5, "node {}: annotation {}: {}; using the args' thresholds", node.name,
               kAnnotationCustomUsageThresholds, custom.error().message);
    return std::nullopt;
  }
  if (custom->aggregated &&
      (custom->aggregated->thresholds.empty() || custom->aggregated->type.empty()))
    custom->aggregated.reset();
  if (custom->usage.empty() && custom->prod_usage.empty() && !custom->aggregated)
    return std::nullopt;

  UsageThresholdsProfile p = base;
  if (!custom->usage.empty())
    p.usage = vectorizer.fromFactors(custom->usage);
  if (!custom->prod_usage.empty())
    p.prod_usage = vectorizer.fromFactors(custom->prod_usage);
  if (custom->aggregated) {
    p.aggregated = AggregatedUsageProfile{vectorizer.fromFactors(custom->aggregated->thresholds),
                                          custom->aggregated->type, custom->aggregated->duration};
  }
  return p;
}

}  // namespace koord::roles::scheduler::loadaware
