#include "statesinformer/kubelet_config.h"

#include <boost/json.hpp>

#include <algorithm>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "koord/kube/quantity.h"
#include "statesinformer/node_topology.h"

namespace koord::roles::koordlet {

namespace json = boost::json;

namespace {

constexpr std::size_t kMaxOptions = 64;

kube::Expected<std::string> stringAt(const json::object& o, std::string_view key,
                                     std::string fallback) {
  const json::value* v = o.if_contains(key);
  if (v == nullptr || v->is_null())
    return fallback;
  if (!v->is_string())
    return kube::makeKubeError(fmt::format("kubeletconfig.{}: not a string", key));
  const auto& s = v->get_string();
  // The kubelet's defaulting: an empty policy is the default one.
  if (s.empty())
    return fallback;
  return std::string(s);
}

kube::Expected<std::int64_t> reservedCpuAt(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  if (v == nullptr || v->is_null())
    return std::int64_t{0};
  const json::object* list = v->if_object();
  if (list == nullptr)
    return kube::makeKubeError(fmt::format("kubeletconfig.{}: not an object", key));
  const json::value* cpu = list->if_contains("cpu");
  if (cpu == nullptr || cpu->is_null())
    return std::int64_t{0};
  if (!cpu->is_string())
    return kube::makeKubeError(fmt::format("kubeletconfig.{}.cpu: not a string", key));
  auto q = kube::Quantity::parse(cpu->get_string());
  if (!q)
    return kube::makeKubeError(fmt::format("kubeletconfig.{}.cpu: {}", key, q.error().message));
  return std::max<std::int64_t>(0, q->milliValue());
}

}  // namespace

kube::Expected<KubeletConfig> parseKubeletConfigz(std::string_view body) {
  if (body.size() > kMaxKubeletConfigzBytes)
    return kube::makeKubeError(fmt::format("configz: {} bytes, more than the {} read", body.size(),
                                           kMaxKubeletConfigzBytes));
  boost::system::error_code ec;
  json::value root = json::parse(body, ec);
  if (ec)
    return kube::makeKubeError(fmt::format("configz: not JSON: {}", ec.message()));
  const json::object* top = root.if_object();
  const json::value* inner = top != nullptr ? top->if_contains("kubeletconfig") : nullptr;
  if (inner == nullptr || !inner->is_object())
    return kube::makeKubeError("configz: no kubeletconfig object");
  const json::object& o = inner->get_object();
  KubeletConfig out;
  auto policy = stringAt(o, "cpuManagerPolicy", "none");
  if (!policy)
    return policy.error();
  out.cpu_manager_policy = std::move(*policy);
  if (const json::value* options = o.if_contains("cpuManagerPolicyOptions");
      options != nullptr && !options->is_null()) {
    const json::object* m = options->if_object();
    if (m == nullptr)
      return kube::makeKubeError("kubeletconfig.cpuManagerPolicyOptions: not an object");
    if (m->size() > kMaxOptions)
      return kube::makeKubeError(
          fmt::format("kubeletconfig.cpuManagerPolicyOptions: more than {} options", kMaxOptions));
    for (const auto& [k, v] : *m) {
      if (!v.is_string())
        return kube::makeKubeError(
            fmt::format("kubeletconfig.cpuManagerPolicyOptions.{}: not a string", k));
      out.cpu_manager_policy_options.emplace(std::string(k), std::string(v.get_string()));
    }
  }
  auto reserved = stringAt(o, "reservedSystemCPUs", "");
  if (!reserved)
    return reserved.error();
  out.reserved_system_cpus = std::move(*reserved);
  auto kube_reserved = reservedCpuAt(o, "kubeReserved");
  if (!kube_reserved)
    return kube_reserved.error();
  out.kube_reserved_milli_cpu = *kube_reserved;
  auto system_reserved = reservedCpuAt(o, "systemReserved");
  if (!system_reserved)
    return system_reserved.error();
  out.system_reserved_milli_cpu = *system_reserved;
  auto topology_policy = stringAt(o, "topologyManagerPolicy", "none");
  if (!topology_policy)
    return topology_policy.error();
  out.topology_manager_policy = std::move(*topology_policy);
  auto scope = stringAt(o, "topologyManagerScope", "container");
  if (!scope)
    return scope.error();
  out.topology_manager_scope = std::move(*scope);
  return out;
}

kube::Expected<std::string> staticPolicyReservedCpus(const KubeletConfig& config,
                                                     const cgroup::CpuTopology& topology) {
  if (config.cpu_manager_policy != apis::kKubeletCPUManagerPolicyStatic)
    return std::string();
  if (!config.reserved_system_cpus.empty()) {
    auto ids = cgroup::parseCpuList(config.reserved_system_cpus);
    if (!ids)
      return kube::makeKubeError(
          fmt::format("kubeletconfig.reservedSystemCPUs: {}", ids.error().message));
    return cgroup::formatCpuList(*ids);
  }
  const std::int64_t milli = config.kube_reserved_milli_cpu + config.system_reserved_milli_cpu;
  if (milli <= 0)
    return kube::makeKubeError(
        "[cpumanager] the static policy requires systemreserved.cpu + kubereserved.cpu to be "
        "greater than zero");
  const std::int64_t count = (milli + 999) / 1000;
  if (count > static_cast<std::int64_t>(topology.cpus.size()))
    return kube::makeKubeError(
        fmt::format("[cpumanager] unable to reserve the required amount of CPUs ({} of {})", count,
                    topology.cpus.size()));
  std::vector<int> all;
  all.reserve(topology.cpus.size());
  for (const auto& c : topology.cpus)
    all.push_back(c.cpu_id);
  return cgroup::formatCpuList(takeByTopology(topology, all, static_cast<int>(count)));
}

apis::KubeletCPUManagerPolicy cpuManagerPolicyOf(const KubeletConfig& config,
                                                 const cgroup::CpuTopology& topology,
                                                 std::string& warning) {
  apis::KubeletCPUManagerPolicy out;
  out.policy = config.cpu_manager_policy;
  for (const auto& [k, v] : config.cpu_manager_policy_options)
    out.options.emplace(k, v);
  warning.clear();
  if (auto reserved = staticPolicyReservedCpus(config, topology))
    out.reserved_cpus = std::move(*reserved);
  else
    warning = reserved.error().message;
  return out;
}

}  // namespace koord::roles::koordlet
