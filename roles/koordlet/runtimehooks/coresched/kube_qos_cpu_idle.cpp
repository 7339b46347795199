#include "runtimehooks/coresched/kube_qos_cpu_idle.h"

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <fmt/format.h>

#include "koord/cgroup/resource_executor.h"
#include "koord/kube/json_fields.h"

namespace koord::roles::koordlet {

namespace json = boost::json;
using kube::jsonfields::childPath;
using kube::jsonfields::field;
using kube::jsonfields::typeError;

namespace {

constexpr std::string_view kPath = "resourceQOSStrategy";

struct ClassParam {
  bool enabled = false;  // cpuQOS.enable under the coreSched policy
  bool idle = false;     // cpuQOS.schedIdle == 1 under the coreSched policy
};

kube::Expected<ClassParam> decodeClass(const json::object& strategy, std::string_view cls,
                                       bool core_sched) {
  const std::string path = childPath(kPath, cls);
  auto class_obj = kube::jsonfields::objectField(strategy, cls, kPath);
  if (!class_obj)
    return class_obj.error();
  if (*class_obj == nullptr)
    return ClassParam{};
  auto cpu_qos = kube::jsonfields::objectField(**class_obj, "cpuQOS", path);
  if (!cpu_qos)
    return cpu_qos.error();
  if (*cpu_qos == nullptr)
    return ClassParam{};
  const std::string qos_path = childPath(path, "cpuQOS");
  auto enable = kube::jsonfields::boolField(**cpu_qos, "enable", qos_path);
  if (!enable)
    return enable.error();
  std::int64_t sched_idle = 0;
  if (const json::value* v = field(**cpu_qos, "schedIdle")) {
    if (!v->is_int64())
      return typeError(childPath(qos_path, "schedIdle"), "integer", *v);
    sched_idle = v->get_int64();
    if (sched_idle < 0 || sched_idle > 1) {
      return kube::makeKubeError(
          fmt::format("{}: must be 0 or 1, got {}", childPath(qos_path, "schedIdle"), sched_idle));
    }
  }
  return ClassParam{core_sched && *enable, core_sched && sched_idle == 1};
}

}  // namespace

kube::Expected<std::optional<KubeQOSCPUIdle>> decodeKubeQOSCPUIdle(const json::object* strategy) {
  if (strategy == nullptr)
    return std::optional<KubeQOSCPUIdle>();
  auto policies = kube::jsonfields::objectField(*strategy, "policies", kPath);
  if (!policies)
    return policies.error();
  bool core_sched = false;
  if (*policies != nullptr) {
    auto policy =
        kube::jsonfields::stringField(**policies, "cpuPolicy", childPath(kPath, "policies"));
    if (!policy)
      return policy.error();
    core_sched = *policy == "coreSched";
  }
  auto lsr = decodeClass(*strategy, "lsrClass", core_sched);
  if (!lsr)
    return lsr.error();
  auto ls = decodeClass(*strategy, "lsClass", core_sched);
  if (!ls)
    return ls.error();
  auto be = decodeClass(*strategy, "beClass", core_sched);
  if (!be)
    return be.error();
  const ClassParam& guaranteed = lsr->enabled ? *lsr : *ls;
  KubeQOSCPUIdle rule;
  rule.idle[static_cast<std::size_t>(cgroup::QoSTier::kGuaranteed)] = guaranteed.idle ? 1 : 0;
  rule.idle[static_cast<std::size_t>(cgroup::QoSTier::kBurstable)] = ls->idle ? 1 : 0;
  rule.idle[static_cast<std::size_t>(cgroup::QoSTier::kBestEffort)] = be->idle ? 1 : 0;
  return std::optional<KubeQOSCPUIdle>(rule);
}

CPUIdleApplyStats applyKubeQOSCPUIdle(cgroup::ResourceExecutor& cgroups,
                                      const KubeQOSCPUIdle& rule) {
  CPUIdleApplyStats stats;
  const auto driver = cgroups.root().driver;
  for (auto tier :
       {cgroup::QoSTier::kBestEffort, cgroup::QoSTier::kBurstable, cgroup::QoSTier::kGuaranteed}) {
    const auto dir = cgroup::qosTierDir(driver, tier);
    if (!cgroups.exists(dir, cgroup::Resource::kCpuIdle))
      continue;
    // A kernel without cpu.idle has the directory but not the file.
    if (!cgroups.read(dir, cgroup::Resource::kCpuIdle)) {
      stats.unsupported = true;
      return stats;
    }
    auto outcome = cgroups.write(dir, cgroup::Resource::kCpuIdle, std::to_string(rule.of(tier)));
    if (!outcome && cgroup::isRefusedWrite(outcome.error()))
      ++stats.refused;
    else if (!outcome)
      stats.errors.push_back(outcome.error().message);
    else if (*outcome == cgroup::WriteOutcome::kWritten)
      ++stats.written;
    else
      ++stats.unchanged;
  }
  return stats;
}

}  // namespace koord::roles::koordlet
