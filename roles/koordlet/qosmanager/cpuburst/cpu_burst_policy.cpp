#include "qosmanager/cpuburst/cpu_burst_policy.h"

#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <algorithm>
#include <limits>
#include <string>

#include <fmt/format.h>

#include "koord/kube/json_fields.h"
#include "qosmanager/framework/resource_qos_strategy.h"

namespace koord::roles::koordlet::qosmanager {

namespace json = boost::json;

namespace {

constexpr std::string_view kStrategyPath = "cpuBurstStrategy";

// CPUBurstConfig's fields present in `o` laid over `out`; `out` is left as it was on error.
kube::Expected<void> overlayConfig(const json::object& o, std::string_view path,
                                   CPUBurstConfig& out) {
  CPUBurstConfig next = out;
  auto policy = kube::jsonfields::stringField(o, "policy", path);
  if (!policy)
    return policy.error();
  if (!policy->empty()) {
    auto p = cpuBurstPolicyNamed(*policy);
    if (!p) {
      return kube::makeKubeError(
          fmt::format("{}: must be one of none, cpuBurstOnly, cfsQuotaBurstOnly, auto, got \"{}\"",
                      kube::jsonfields::childPath(path, "policy"), *policy));
    }
    next.policy = *p;
  }
  struct Field {
    std::string_view name;
    std::int64_t min;
    std::int64_t max;
    std::int64_t* into;
  };
  const Field fields[] = {
      {"cpuBurstPercent", kMinCPUBurstPercent, kMaxCPUBurstPercent, &next.cpu_burst_percent},
      {"cfsQuotaBurstPercent", kMinCFSQuotaBurstPercent, kMaxCFSQuotaBurstPercent,
       &next.cfs_quota_burst_percent},
      {"cfsQuotaBurstPeriodSeconds", kMinCFSQuotaBurstPeriodSeconds, kMaxCFSQuotaBurstPeriodSeconds,
       &next.cfs_quota_burst_period_seconds},
  };
  for (const auto& f : fields) {
    auto v = boundedIntField(o, f.name, path, f.min, f.max);
    if (!v)
      return v.error();
    if (*v)
      *f.into = **v;
  }
  out = next;
  return {};
}

}  // namespace

std::string_view cpuBurstPolicyName(CPUBurstPolicy p) {
  switch (p) {
    case CPUBurstPolicy::kNone:
      return "none";
    case CPUBurstPolicy::kCPUBurstOnly:
      return "cpuBurstOnly";
    case CPUBurstPolicy::kCFSQuotaBurstOnly:
      return "cfsQuotaBurstOnly";
    case CPUBurstPolicy::kAuto:
      return "auto";
  }
  return "none";
}

std::optional<CPUBurstPolicy> cpuBurstPolicyNamed(std::string_view name) {
  for (auto p : {CPUBurstPolicy::kNone, CPUBurstPolicy::kCPUBurstOnly,
                 CPUBurstPolicy::kCFSQuotaBurstOnly, CPUBurstPolicy::kAuto}) {
    if (cpuBurstPolicyName(p) == name)
      return p;
  }
  return std::nullopt;
}

kube::Expected<CPUBurstStrategy> decodeCPUBurstStrategy(const json::object& strategy) {
  CPUBurstStrategy out;
  if (auto r = overlayConfig(strategy, kStrategyPath, out.config); !r)
    return r.error();
  auto threshold = boundedIntField(strategy, "sharePoolThresholdPercent", kStrategyPath, 0, 100);
  if (!threshold)
    return threshold.error();
  out.share_pool_threshold_percent = threshold->value_or(out.share_pool_threshold_percent);
  return out;
}

kube::Expected<CPUBurstConfig> podCPUBurstConfig(const CPUBurstConfig& node,
                                                 std::optional<std::string_view> annotation) {
  if (!annotation)
    return node;
  const std::string path = fmt::format("annotation {}", kAnnotationPodCPUBurst);
  if (annotation->size() > kMaxPodCPUBurstBytes) {
    return kube::makeKubeError(fmt::format("{}: {} bytes, more than the {} accepted", path,
                                           annotation->size(), kMaxPodCPUBurstBytes));
  }
  boost::system::error_code ec;
  json::value v = json::parse(*annotation, ec);
  if (ec)
    return kube::makeKubeError(fmt::format("{}: not JSON: {}", path, ec.message()));
  if (v.is_null())
    return node;
  if (!v.is_object())
    return kube::jsonfields::typeError(path, "object", v);
  CPUBurstConfig out = node;
  if (auto r = overlayConfig(v.as_object(), path, out); !r)
    return r.error();
  return out;
}

std::int64_t baseCfsQuota(std::int64_t limit_milli) {
  if (limit_milli <= 0)
    return -1;
  // A limit past what a node could have would overflow the product; no quota is safer than a
  // wrapped one.
  if (limit_milli > std::numeric_limits<std::int64_t>::max() / kCFSBasePeriodUs)
    return -1;
  return std::max(limit_milli * kCFSBasePeriodUs / 1000, kCFSQuotaMinUs);
}

std::int64_t containerCfsBurst(std::int64_t limit_milli, const CPUBurstConfig& config) {
  if (!config.cpuBurstEnabled() || limit_milli <= 0)
    return 0;
  const double cores = static_cast<double>(limit_milli) / 1000.0;
  const double burst = cores * static_cast<double>(config.cpu_burst_percent) / 100.0 *
                       static_cast<double>(kCFSBasePeriodUs);
  if (burst >= static_cast<double>(std::numeric_limits<std::int64_t>::max()))
    return std::numeric_limits<std::int64_t>::max();
  return static_cast<std::int64_t>(burst);
}

std::int64_t cfsQuotaCeiling(std::int64_t base, const CPUBurstConfig& config) {
  if (base <= 0 || config.cfs_quota_burst_percent <= 100)
    return base;
  const double ceiling =
      static_cast<double>(base) * static_cast<double>(config.cfs_quota_burst_percent) / 100.0;
  if (ceiling >= static_cast<double>(std::numeric_limits<std::int64_t>::max()))
    return std::numeric_limits<std::int64_t>::max();
  return static_cast<std::int64_t>(ceiling);
}

}  // namespace koord::roles::koordlet::qosmanager
