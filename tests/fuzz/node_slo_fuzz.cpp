// The koordlet's NodeSLO: the informer's projection (decodeNodeSLOInfo, with spec.hostApplications
// typed) and the strategy decoders that read its objects: BE CPU suppression and BE memory and
// CPU eviction from resourceUsedThresholdWithBE, cpu.idle from resourceQOSStrategy. Whoever can
// write the slo-controller-config ConfigMap or a NodeSLO decides this text. The input is a NodeSLO;
// when it is an object the strategy decoders also read it directly, so a bare strategy object is
// a seed too. Each decoded strategy must keep its documented bounds and decode unchanged from
// its own fields written back; each host application's cgroup directory must stay a relative
// path of checked components.
#include <boost/json.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "koord/kube/json_limits.h"
#include "qosmanager/cpusuppress/suppress_strategy.h"
#include "qosmanager/evict/eviction_strategy.h"
#include "runtimehooks/coresched/kube_qos_cpu_idle.h"
#include "statesinformer/host_application.h"
#include "statesinformer/node_info.h"

namespace {

namespace json = boost::json;
using namespace koord::roles::koordlet;
using namespace koord::roles::koordlet::qosmanager;

void check(bool ok) {
  if (!ok)
    std::abort();
}

bool percent(std::int64_t v) {
  return v >= 0 && v <= 100;
}

void checkSuppress(const json::object& o) {
  auto s = decodeCPUSuppressStrategy(o);
  if (!s)
    return;
  check(percent(s->threshold_percent));
  check(!s->min_percent || percent(*s->min_percent));
  json::object written{{"enable", s->enable},
                       {"cpuSuppressThresholdPercent", s->threshold_percent},
                       {"cpuSuppressPolicy", cpuSuppressPolicyName(s->policy)}};
  if (s->min_percent)
    written["cpuSuppressMinPercent"] = *s->min_percent;
  auto again = decodeCPUSuppressStrategy(written);
  check(again && again->enable == s->enable && again->threshold_percent == s->threshold_percent &&
        again->min_percent == s->min_percent && again->policy == s->policy);
}

void checkMemoryEvict(const json::object& o) {
  auto s = decodeBEMemoryEvictStrategy(o);
  if (!s)
    return;
  check(percent(s->threshold_percent));
  check(!s->lower_percent || percent(*s->lower_percent));
  if (s->enable)
    check(s->effectiveLowerPercent() < s->threshold_percent);
  json::object written{{"enable", s->enable},
                       {"memoryEvictThresholdPercent", s->threshold_percent}};
  if (s->lower_percent)
    written["memoryEvictLowerPercent"] = *s->lower_percent;
  auto again = decodeBEMemoryEvictStrategy(written);
  check(again && again->enable == s->enable && again->threshold_percent == s->threshold_percent &&
        again->lower_percent == s->lower_percent);
}

void checkCPUEvict(const json::object& o) {
  auto s = decodeBECPUEvictStrategy(o);
  if (!s)
    return;
  check(percent(s->usage_threshold_percent));
  check(!s->time_window_seconds || *s->time_window_seconds > 0);
  if (s->enable) {
    check(s->satisfaction_lower_percent && s->satisfaction_upper_percent);
    const std::int64_t lower = *s->satisfaction_lower_percent;
    const std::int64_t upper = *s->satisfaction_upper_percent;
    check(lower > 0 && lower <= kBECPUSatisfactionLowerPercentMax);
    check(upper > 0 && upper < kBECPUSatisfactionUpperPercentLimit && upper >= lower);
  }
  json::object written{{"enable", s->enable},
                       {"cpuEvictBEUsageThresholdPercent", s->usage_threshold_percent},
                       {"cpuEvictPolicy", cpuEvictPolicyName(s->policy)}};
  if (s->satisfaction_lower_percent)
    written["cpuEvictBESatisfactionLowerPercent"] = *s->satisfaction_lower_percent;
  if (s->satisfaction_upper_percent)
    written["cpuEvictBESatisfactionUpperPercent"] = *s->satisfaction_upper_percent;
  if (s->time_window_seconds)
    written["cpuEvictTimeWindowSeconds"] = *s->time_window_seconds;
  auto again = decodeBECPUEvictStrategy(written);
  check(again && again->enable == s->enable &&
        again->satisfaction_lower_percent == s->satisfaction_lower_percent &&
        again->satisfaction_upper_percent == s->satisfaction_upper_percent &&
        again->usage_threshold_percent == s->usage_threshold_percent &&
        again->time_window_seconds == s->time_window_seconds && again->policy == s->policy);
}

void checkCPUIdle(const json::object* o) {
  auto rule = decodeKubeQOSCPUIdle(o);
  if (!rule || !*rule)
    return;
  for (int idle : (*rule)->idle)
    check(idle == 0 || idle == 1);
}

void checkThresholds(const json::object& o) {
  checkSuppress(o);
  checkMemoryEvict(o);
  checkCPUEvict(o);
}

// Relative, no empty, "." or ".." component: it is joined under the cgroup mounts.
void checkCgroupDir(const std::string& dir) {
  check(!dir.empty() && dir.front() != '/' && dir.back() != '/');
  std::size_t start = 0;
  while (true) {
    const auto slash = dir.find('/', start);
    const std::string_view part =
        std::string_view(dir).substr(start, slash == std::string::npos ? dir.npos : slash - start);
    check(!part.empty() && part != "." && part != "..");
    if (slash == std::string::npos)
      break;
    start = slash + 1;
  }
}

void checkHostApplications(const HostApplications& apps) {
  for (std::size_t i = 0; i < apps.apps.size(); ++i) {
    const auto& app = apps.apps[i];
    check(!app.name.empty());
    for (std::size_t j = 0; j < i; ++j)
      check(apps.apps[j].name != app.name);
    if (app.has_cgroup_path)
      check(!app.parent_dir.empty() || !app.relative_path.empty());
    checkCgroupDir(hostAppCgroupDir(koord::cgroup::CgroupDriver::kCgroupfs, app));
    checkCgroupDir(hostAppCgroupDir(koord::cgroup::CgroupDriver::kSystemd, app));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  boost::system::error_code ec;
  // The informer's parse options: the same depth the API server's objects may have.
  const json::value v =
      json::parse(text, ec, json::storage_ptr(), koord::kube::apiObjectParseOptions());
  if (ec)
    return 0;
  if (auto info = decodeNodeSLOInfo(v)) {
    if (info->resource_used_threshold_with_be)
      checkThresholds(*info->resource_used_threshold_with_be);
    checkCPUIdle(info->resource_qos_strategy.get());
    checkHostApplications(info->host_applications);
  }
  if (v.is_object()) {
    checkThresholds(v.get_object());
    checkCPUIdle(&v.get_object());
  }
  if (v.is_array())
    checkHostApplications(decodeHostApplications(&v));
  return 0;
}
