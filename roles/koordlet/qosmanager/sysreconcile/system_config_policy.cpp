#include "qosmanager/sysreconcile/system_config_policy.h"

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <limits>

#include <fmt/format.h>

#include "koord/kube/json_fields.h"

namespace koord::roles::koordlet::qosmanager {

namespace json = boost::json;
using kube::jsonfields::childPath;
using kube::jsonfields::field;
using kube::jsonfields::typeError;

namespace {

constexpr std::string_view kPath = "systemStrategy";

// Absent or null keeps `fallback`; a value outside [min, max] is an error naming the field.
kube::Expected<std::int64_t> intField(const json::object& o, std::string_view name,
                                      std::int64_t fallback, std::int64_t min, std::int64_t max) {
  const json::value* v = field(o, name);
  if (v == nullptr)
    return fallback;
  if (!v->is_int64())
    return typeError(childPath(kPath, name), "integer", *v);
  const std::int64_t n = v->get_int64();
  if (n < min || n > max) {
    return kube::makeKubeError(
        fmt::format("{}: must be in [{}, {}], got {}", childPath(kPath, name), min, max, n));
  }
  return n;
}

}  // namespace

kube::Expected<SystemStrategy> decodeSystemStrategy(const json::object& o) {
  SystemStrategy s;
  constexpr auto kMax = std::numeric_limits<std::int64_t>::max();
  auto factor = intField(o, "minFreeKbytesFactor", s.min_free_kbytes_factor, 1, kMax);
  if (!factor)
    return factor.error();
  auto watermark = intField(o, "watermarkScaleFactor", s.watermark_scale_factor, 1, 400);
  if (!watermark)
    return watermark.error();
  auto reap = intField(o, "memcgReapBackGround", s.memcg_reap_background, 0, 1);
  if (!reap)
    return reap.error();
  s.min_free_kbytes_factor = *factor;
  s.watermark_scale_factor = *watermark;
  s.memcg_reap_background = *reap;
  return s;
}

SystemConfigPlan planSystemConfig(const SystemStrategy& s, std::int64_t node_memory_bytes) {
  SystemConfigPlan plan;
  const std::int64_t total_kib = node_memory_bytes / 1024;
  if (total_kib <= 0) {
    plan.skipped.push_back(
        fmt::format("min_free_kbytes: node memory capacity {} is not positive", node_memory_bytes));
  } else if (s.min_free_kbytes_factor > std::numeric_limits<std::int64_t>::max() / total_kib) {
    plan.skipped.push_back(fmt::format("min_free_kbytes: {} KiB x factor {} overflows", total_kib,
                                       s.min_free_kbytes_factor));
  } else {
    const std::int64_t value = total_kib * s.min_free_kbytes_factor / 10000;
    if (value < kMinFreeKbytesMin || value > kMinFreeKbytesMax) {
      plan.skipped.push_back(
          fmt::format("min_free_kbytes: {} ({} KiB x {} / 10000) is outside [{}, {}]", value,
                      total_kib, s.min_free_kbytes_factor, kMinFreeKbytesMin, kMinFreeKbytesMax));
    } else {
      plan.min_free_kbytes = value;
    }
  }
  if (s.watermark_scale_factor < kWatermarkScaleFactorMin ||
      s.watermark_scale_factor > kWatermarkScaleFactorMax) {
    plan.skipped.push_back(fmt::format("watermark_scale_factor: {} is outside [{}, {}]",
                                       s.watermark_scale_factor, kWatermarkScaleFactorMin,
                                       kWatermarkScaleFactorMax));
  } else {
    plan.watermark_scale_factor = s.watermark_scale_factor;
  }
  plan.memcg_reap_background = s.memcg_reap_background;
  return plan;
}

}  // namespace koord::roles::koordlet::qosmanager
