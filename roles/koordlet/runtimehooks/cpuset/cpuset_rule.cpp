#include "runtimehooks/cpuset/cpuset_rule.h"

#include <fmt/format.h>

#include <algorithm>
#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>
#include <span>

#include "koord/apis/input_limits.h"
#include "koord/apis/node_resource_topology.h"
#include "koord/cgroup/cpu_topology.h"
#include "runtimehooks/cpuset/cpuset_allocator.h"

namespace koord::roles::koordlet {

namespace {

namespace json = boost::json;

kube::Expected<std::vector<CPUSetPool>> poolsOf(const kube::Labels& annotations,
                                                std::string_view key) {
  auto pools = apis::parseCPUSharedPools(annotations, key);
  if (!pools)
    return pools.error();
  std::vector<CPUSetPool> out;
  out.reserve(pools->size());
  for (std::size_t i = 0; i < pools->size(); ++i) {
    const apis::CPUSharedPool& pool = (*pools)[i];
    auto cpus = cgroup::parseCpuList(pool.cpuset);
    if (!cpus)
      return kube::makeKubeError(fmt::format("{}: [{}].cpuset: {}", key, i, cpus.error().message));
    out.push_back({pool.node, std::move(*cpus)});
  }
  return out;
}

// node.koordinator.sh/system-qos-resource as Koordinator's GetSystemQOSResource reads it: its
// cpuset, whether or not exclusive (exclusivity only shapes the pools).
kube::Expected<std::string> systemQOSCpuset(const kube::Labels& annotations) {
  const std::string_view key = apis::kAnnotationNodeSystemQOSResource;
  auto it = annotations.find(key);
  if (it == annotations.end())
    return std::string();
  auto refuse = [&](std::string_view why) {
    return kube::makeKubeError(fmt::format("{}: {}", key, why));
  };
  if (it->second.size() > apis::kMaxAnnotationValueBytes)
    return refuse("longer than an annotation may be");
  boost::system::error_code ec;
  const json::value v = json::parse(it->second, ec);
  if (ec)
    return refuse(fmt::format("not JSON: {}", ec.message()));
  if (v.is_null())
    return std::string();
  if (!v.is_object())
    return refuse("expected an object");
  const json::object& o = v.get_object();
  if (const json::value* e = o.if_contains("cpusetExclusive");
      e != nullptr && !e->is_null() && !e->is_bool())
    return refuse("cpusetExclusive: expected a boolean");
  const json::value* s = o.if_contains("cpuset");
  if (s == nullptr || s->is_null())
    return std::string();
  if (!s->is_string())
    return refuse("cpuset: expected a string");
  auto cpus = cgroup::parseCpuList(std::string_view(s->get_string()));
  if (!cpus)
    return refuse(fmt::format("cpuset: {}", cpus.error().message));
  return cgroup::formatCpuList(*cpus);
}

std::string joined(std::span<const CPUSetPool> pools, std::span<const std::int32_t> nodes) {
  std::vector<int> cpus;
  for (const CPUSetPool& pool : pools) {
    if (std::find(nodes.begin(), nodes.end(), pool.node) != nodes.end())
      cpus.insert(cpus.end(), pool.cpus.begin(), pool.cpus.end());
  }
  return cgroup::formatCpuList(cpus);
}

std::string joinedAll(std::span<const CPUSetPool> pools) {
  std::vector<int> cpus;
  for (const CPUSetPool& pool : pools)
    cpus.insert(cpus.end(), pool.cpus.begin(), pool.cpus.end());
  return cgroup::formatCpuList(cpus);
}

std::optional<std::string> cpusetFromRule(const CPUSetRule& rule, const kube::Labels& labels,
                                          const PodResourceStatus& status, apis::KubeQoS kube_qos,
                                          bool be_cpu_manager) {
  const apis::QoSClass qos = apis::podQoSClassRaw(labels);
  if (!status.cpu_numa_nodes.empty()) {
    if (qos == apis::QoSClass::kBE && be_cpu_manager)
      return joined(rule.be_pools, status.cpu_numa_nodes);
    if (qos != apis::QoSClass::kBE)
      return joined(rule.pools, status.cpu_numa_nodes);
  }
  if (qos == apis::QoSClass::kSystem && !rule.system_qos_cpuset.empty())
    return rule.system_qos_cpuset;
  if (qos == apis::QoSClass::kLS)
    return joinedAll(rule.pools);
  if (kube_qos == apis::KubeQoS::kBestEffort)
    return std::string();
  if (rule.kubelet_policy == apis::kKubeletCPUManagerPolicyStatic)
    return std::nullopt;
  return joinedAll(rule.pools);
}

}  // namespace

kube::Expected<CPUSetRule> parseCPUSetRule(const kube::Labels& nrt_annotations) {
  CPUSetRule rule;
  auto pools = poolsOf(nrt_annotations, apis::kAnnotationNodeCPUSharedPools);
  if (!pools)
    return pools.error();
  rule.pools = std::move(*pools);
  auto be_pools = poolsOf(nrt_annotations, apis::kAnnotationNodeBECPUSharedPools);
  if (!be_pools)
    return be_pools.error();
  rule.be_pools = std::move(*be_pools);
  auto policy = apis::parseKubeletCPUManagerPolicy(nrt_annotations);
  if (!policy)
    return policy.error();
  rule.kubelet_policy = std::move(policy->policy);
  auto system = systemQOSCpuset(nrt_annotations);
  if (!system)
    return system.error();
  rule.system_qos_cpuset = std::move(*system);
  return rule;
}

std::string allPoolsCpuset(const CPUSetRule& rule) {
  return joinedAll(rule.pools);
}

kube::Expected<std::optional<std::string>> containerCpuset(const CPUSetRule& rule,
                                                           const kube::Labels& labels,
                                                           const kube::Annotations& annotations,
                                                           apis::KubeQoS kube_qos,
                                                           bool be_cpu_manager) {
  auto status = parsePodResourceStatus(annotations);
  if (!status)
    return status.error();
  return cpusetFromRule(rule, labels, *status, kube_qos, be_cpu_manager);
}

kube::Expected<std::string> hostAppCpuset(const CPUSetRule& rule, apis::QoSClass qos) {
  if (qos != apis::QoSClass::kLS) {
    return kube::makeKubeError(
        fmt::format("QoS {:?}: only LS host applications get a cpuset", apis::qosClassName(qos)));
  }
  return joinedAll(rule.pools);
}

apis::KubeQoS kubeQoSOfCgroupParent(std::string_view cgroup_parent) {
  if (cgroup_parent.find("besteffort") != std::string_view::npos)
    return apis::KubeQoS::kBestEffort;
  if (cgroup_parent.find("burstable") != std::string_view::npos)
    return apis::KubeQoS::kBurstable;
  return apis::KubeQoS::kGuaranteed;
}

kube::Expected<ContainerCPUSetPlan> planContainerCPUSet(const CPUSetRule* rule,
                                                        const kube::Labels& labels,
                                                        const kube::Annotations& annotations,
                                                        apis::KubeQoS kube_qos,
                                                        bool be_cpu_manager) {
  auto status = parsePodResourceStatus(annotations);
  if (!status)
    return status.error();
  auto binding = podCPUSetBinding(labels, *status);
  if (!binding)
    return binding.error();
  if (*binding)
    return ContainerCPUSetPlan{.cpus = (*binding)->cpus, .unset_cfs_quota = true};
  if (rule == nullptr)
    return ContainerCPUSetPlan{};
  auto cpus = cpusetFromRule(*rule, labels, *status, kube_qos, be_cpu_manager);
  return ContainerCPUSetPlan{.cpus = cpus.value_or(std::string())};
}

}  // namespace koord::roles::koordlet
