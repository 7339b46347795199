#include "qosmanager/cpusuppress/suppress_strategy.h"

#include <boost/json/value.hpp>

#include <fmt/format.h>

#include "koord/kube/json_fields.h"

namespace koord::roles::koordlet::qosmanager {

namespace json = boost::json;
using kube::jsonfields::field;
using kube::jsonfields::typeError;

namespace {

constexpr std::string_view kPath = "resourceUsedThresholdWithBE";

// Go decodes into *int64: only integer literals, and within int64.
kube::Expected<std::optional<std::int64_t>> percentField(const json::object& o,
                                                         std::string_view name) {
  const json::value* v = field(o, name);
  if (v == nullptr)
    return std::optional<std::int64_t>();
  std::int64_t n = 0;
  if (v->is_int64()) {
    n = v->get_int64();
  } else if (v->is_uint64()) {
    // Above INT64_MAX, so out of range whatever the bound.
    return kube::makeKubeError(fmt::format("{}.{}: must be <= 100", kPath, name));
  } else {
    return typeError(kube::jsonfields::childPath(kPath, name), "integer", *v);
  }
  if (n < 0)
    return kube::makeKubeError(fmt::format("{}.{}: must be >= 0, got {}", kPath, name, n));
  if (n > 100)
    return kube::makeKubeError(fmt::format("{}.{}: must be <= 100, got {}", kPath, name, n));
  return std::optional<std::int64_t>(n);
}

}  // namespace

std::string_view cpuSuppressPolicyName(CPUSuppressPolicy p) {
  return p == CPUSuppressPolicy::kCFSQuota ? "cfsQuota" : "cpuset";
}

kube::Expected<CPUSuppressStrategy> decodeCPUSuppressStrategy(const json::object& o) {
  CPUSuppressStrategy s;
  auto enable = kube::jsonfields::boolField(o, "enable", kPath);
  if (!enable)
    return enable.error();
  s.enable = *enable;
  auto threshold = percentField(o, "cpuSuppressThresholdPercent");
  if (!threshold)
    return threshold.error();
  if (*threshold)
    s.threshold_percent = **threshold;
  auto min = percentField(o, "cpuSuppressMinPercent");
  if (!min)
    return min.error();
  s.min_percent = *min;
  if (const json::value* v = field(o, "cpuSuppressPolicy")) {
    if (!v->is_string())
      return typeError(kube::jsonfields::childPath(kPath, "cpuSuppressPolicy"), "string", *v);
    if (v->get_string() == "cfsQuota")
      s.policy = CPUSuppressPolicy::kCFSQuota;
  }
  return s;
}

}  // namespace koord::roles::koordlet::qosmanager
