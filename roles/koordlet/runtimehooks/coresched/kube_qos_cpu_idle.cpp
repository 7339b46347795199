#include "runtimehooks/coresched/kube_qos_cpu_idle.h"

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <fmt/format.h>

#include "koord/cgroup/resource_executor.h"
#include "koord/kube/json_fields.h"
#include "qosmanager/framework/resource_qos_strategy.h"

namespace koord::roles::koordlet {

namespace json = boost::json;

namespace {

struct ClassParam {
  bool enabled = false;  // cpuQOS.enable under the coreSched policy
  bool idle = false;     // cpuQOS.schedIdle == 1 under the coreSched policy
};

kube::Expected<ClassParam> decodeClass(const json::object& strategy, std::string_view cls,
                                       bool core_sched) {
  auto cpu_qos = qosmanager::resourceQOSSection(strategy, cls, "cpuQOS");
  if (!cpu_qos)
    return cpu_qos.error();
  if (cpu_qos->object == nullptr)
    return ClassParam{};
  auto enable = kube::jsonfields::boolField(*cpu_qos->object, "enable", cpu_qos->path);
  if (!enable)
    return enable.error();
  auto sched_idle = qosmanager::boundedIntField(*cpu_qos->object, "schedIdle", cpu_qos->path, 0, 1);
  if (!sched_idle)
    return sched_idle.error();
  return ClassParam{core_sched && *enable, core_sched && sched_idle->value_or(0) == 1};
}

}  // namespace

kube::Expected<std::optional<KubeQOSCPUIdle>> decodeKubeQOSCPUIdle(const json::object* strategy) {
  if (strategy == nullptr)
    return std::optional<KubeQOSCPUIdle>();
  auto policy = qosmanager::resourceQOSCpuPolicy(*strategy);
  if (!policy)
    return policy.error();
  const bool core_sched = *policy == "coreSched";
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
