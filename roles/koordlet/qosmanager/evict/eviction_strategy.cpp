#include "qosmanager/evict/eviction_strategy.h"

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>
#include <boost/system/error_code.hpp>

#include <limits>
#include <string>

#include <fmt/format.h>

#include "koord/kube/json_fields.h"

namespace koord::roles::koordlet::qosmanager {

namespace json = boost::json;
using kube::jsonfields::childPath;
using kube::jsonfields::field;
using kube::jsonfields::typeError;

namespace {

constexpr std::string_view kPath = "resourceUsedThresholdWithBE";
constexpr std::int64_t kNoMax = std::numeric_limits<std::int64_t>::max();

kube::Error fieldError(std::string_view name, std::string_view what) {
  return kube::makeKubeError(fmt::format("{}.{}: {}", kPath, name, what));
}

// Go decodes these into *int64: integer literals only, within int64. The bounds are the API's
// validate tags, which the slo-controller enforces before a NodeSLO reaches the koordlet.
kube::Expected<std::optional<std::int64_t>> intField(const json::object& o, std::string_view name,
                                                     std::int64_t min, std::int64_t max) {
  const json::value* v = field(o, name);
  if (v == nullptr)
    return std::optional<std::int64_t>();
  if (v->is_uint64())  // above INT64_MAX
    return fieldError(name, fmt::format("must be <= {}", max));
  if (!v->is_int64())
    return typeError(childPath(kPath, name), "integer", *v);
  const std::int64_t n = v->get_int64();
  if (n < min)
    return fieldError(name, fmt::format("must be >= {}, got {}", min, n));
  if (n > max)
    return fieldError(name, fmt::format("must be <= {}, got {}", max, n));
  return std::optional<std::int64_t>(n);
}

kube::Expected<std::optional<std::int64_t>> percentField(const json::object& o,
                                                         std::string_view name) {
  return intField(o, name, 0, 100);
}

// Koordinator's isSatisfactionConfigValid.
kube::Expected<void> checkSatisfaction(const BECPUEvictStrategy& s) {
  if (!s.satisfaction_lower_percent)
    return fieldError("cpuEvictBESatisfactionLowerPercent", "must be set when enable is true");
  if (!s.satisfaction_upper_percent)
    return fieldError("cpuEvictBESatisfactionUpperPercent", "must be set when enable is true");
  const std::int64_t lower = *s.satisfaction_lower_percent;
  const std::int64_t upper = *s.satisfaction_upper_percent;
  if (lower <= 0 || lower > kBECPUSatisfactionLowerPercentMax) {
    return fieldError(
        "cpuEvictBESatisfactionLowerPercent",
        fmt::format("must be in (0, {}], got {}", kBECPUSatisfactionLowerPercentMax, lower));
  }
  if (upper <= 0 || upper >= kBECPUSatisfactionUpperPercentLimit) {
    return fieldError(
        "cpuEvictBESatisfactionUpperPercent",
        fmt::format("must be in (0, {}), got {}", kBECPUSatisfactionUpperPercentLimit, upper));
  }
  if (upper < lower) {
    return fieldError(
        "cpuEvictBESatisfactionUpperPercent",
        fmt::format("must be >= cpuEvictBESatisfactionLowerPercent ({}), got {}", lower, upper));
  }
  return {};
}

}  // namespace

kube::Expected<BEMemoryEvictStrategy> decodeBEMemoryEvictStrategy(const json::object& o) {
  BEMemoryEvictStrategy s;
  auto enable = kube::jsonfields::boolField(o, "enable", kPath);
  if (!enable)
    return enable.error();
  s.enable = *enable;
  auto threshold = percentField(o, "memoryEvictThresholdPercent");
  if (!threshold)
    return threshold.error();
  if (*threshold)
    s.threshold_percent = **threshold;
  auto lower = percentField(o, "memoryEvictLowerPercent");
  if (!lower)
    return lower.error();
  s.lower_percent = *lower;
  // Only an explicit lower percent can fail: the default sits below the threshold.
  if (s.enable && s.effectiveLowerPercent() >= s.threshold_percent) {
    return fieldError("memoryEvictLowerPercent",
                      fmt::format("must be < memoryEvictThresholdPercent ({}), got {}",
                                  s.threshold_percent, s.effectiveLowerPercent()));
  }
  return s;
}

std::string_view cpuEvictPolicyName(CPUEvictPolicy p) {
  return p == CPUEvictPolicy::kEvictByAllocatable ? "evictByAllocatable" : "evictByRealLimit";
}

kube::Expected<BECPUEvictStrategy> decodeBECPUEvictStrategy(const json::object& o) {
  BECPUEvictStrategy s;
  auto enable = kube::jsonfields::boolField(o, "enable", kPath);
  if (!enable)
    return enable.error();
  s.enable = *enable;
  auto lower = percentField(o, "cpuEvictBESatisfactionLowerPercent");
  if (!lower)
    return lower.error();
  s.satisfaction_lower_percent = *lower;
  auto upper = percentField(o, "cpuEvictBESatisfactionUpperPercent");
  if (!upper)
    return upper.error();
  s.satisfaction_upper_percent = *upper;
  auto usage = percentField(o, "cpuEvictBEUsageThresholdPercent");
  if (!usage)
    return usage.error();
  if (*usage)
    s.usage_threshold_percent = **usage;
  auto window = intField(o, "cpuEvictTimeWindowSeconds", 1, kNoMax);
  if (!window)
    return window.error();
  s.time_window_seconds = *window;
  if (const json::value* v = field(o, "cpuEvictPolicy")) {
    if (!v->is_string())
      return typeError(childPath(kPath, "cpuEvictPolicy"), "string", *v);
    if (v->get_string() == "evictByAllocatable")
      s.policy = CPUEvictPolicy::kEvictByAllocatable;
  }
  if (s.enable) {
    if (auto checked = checkSatisfaction(s); !checked)
      return checked.error();
  }
  return s;
}

bool isEvictionPolicyAllowed(std::optional<std::string_view> annotation, std::string_view feature) {
  if (!annotation)
    return true;
  boost::system::error_code ec;
  const json::value parsed = json::parse(*annotation, ec);
  if (ec || !parsed.is_array())
    return false;
  bool listed = false;
  for (const json::value& entry : parsed.get_array()) {
    // Go's decoder leaves a null element as "" and fails the whole list on any other non-string.
    if (entry.is_null()) {
      listed = listed || feature.empty();
    } else if (entry.is_string()) {
      listed = listed || entry.get_string() == feature;
    } else {
      return false;
    }
  }
  return listed;
}

}  // namespace koord::roles::koordlet::qosmanager
