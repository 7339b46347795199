#include "qosmanager/evict/used_threshold_strategy.h"

#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

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

// Go decodes these into *int64 / *int32: integer literals only, within the type.
kube::Expected<std::optional<std::int64_t>> intField(const json::object& o, std::string_view name,
                                                     std::int64_t min, std::int64_t max) {
  const json::value* v = field(o, name);
  if (v == nullptr)
    return std::optional<std::int64_t>();
  if (!v->is_int64() && !v->is_uint64())
    return typeError(childPath(kPath, name), "integer", *v);
  if (v->is_uint64() || v->get_int64() > max) {
    return kube::makeKubeError(
        fmt::format("{}.{}: must be <= {}, got {}", kPath, name, max, json::serialize(*v)));
  }
  const std::int64_t n = v->get_int64();
  if (n < min)
    return kube::makeKubeError(fmt::format("{}.{}: must be >= {}, got {}", kPath, name, min, n));
  return std::optional<std::int64_t>(n);
}

}  // namespace

kube::Expected<UsedThresholdEvictStrategy> decodeUsedThresholdEvictStrategy(const json::object& o,
                                                                            EvictResource r) {
  const bool cpu = r == EvictResource::kCPU;
  UsedThresholdEvictStrategy s;
  auto enable = kube::jsonfields::boolField(o, "enable", kPath);
  if (!enable)
    return enable.error();
  s.enable = *enable;
  auto threshold =
      intField(o, cpu ? "cpuEvictThresholdPercent" : "memoryEvictThresholdPercent", 0, 100);
  if (!threshold)
    return threshold.error();
  s.threshold_percent = *threshold;
  if (!cpu && !s.threshold_percent)
    s.threshold_percent = 70;
  auto lower = intField(o, cpu ? "cpuEvictLowerPercent" : "memoryEvictLowerPercent", 0, 100);
  if (!lower)
    return lower.error();
  s.lower_percent = *lower;
  auto priority =
      intField(o, "evictEnabledPriorityThreshold", std::numeric_limits<std::int32_t>::min(),
               std::numeric_limits<std::int32_t>::max());
  if (!priority)
    return priority.error();
  if (*priority)
    s.priority_threshold = static_cast<std::int32_t>(**priority);
  if (cpu) {
    auto window =
        intField(o, "cpuEvictTimeWindowSeconds", 1, std::numeric_limits<std::int64_t>::max());
    if (!window)
      return window.error();
    s.time_window_seconds = *window;
  }
  return s;
}

std::string usedThresholdConfigProblem(const UsedThresholdEvictStrategy& s, EvictResource r) {
  const bool cpu = r == EvictResource::kCPU;
  if (!s.threshold_percent)
    return cpu ? "cpuEvictThresholdPercent is not set" : "memoryEvictThresholdPercent is not set";
  if (s.effectiveLowerPercent() >= *s.threshold_percent) {
    return fmt::format("lower percent ({}) must be below the threshold percent ({})",
                       s.effectiveLowerPercent(), *s.threshold_percent);
  }
  if (!s.priority_threshold)
    return "evictEnabledPriorityThreshold is not set";
  return "";
}

}  // namespace koord::roles::koordlet::qosmanager
