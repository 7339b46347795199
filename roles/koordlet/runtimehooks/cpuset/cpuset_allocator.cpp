#include "runtimehooks/cpuset/cpuset_allocator.h"

#include <fmt/format.h>

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>
#include <limits>

#include "koord/apis/extension.h"
#include "koord/apis/input_limits.h"
#include "koord/cgroup/cpu_topology.h"
#include "koord/kube/quantity.h"

namespace koord::roles::koordlet {

namespace {

namespace json = boost::json;

// A ResourceList value as resource.Quantity's UnmarshalJSON takes it: a string, an integer
// (its text), or null (zero).
kube::Expected<kube::Quantity> quantityOf(const json::value& v) {
  if (v.is_null())
    return kube::Quantity();
  std::string text;
  if (v.is_string())
    text = v.get_string();
  else if (v.is_int64())
    text = std::to_string(v.get_int64());
  else if (v.is_uint64())
    text = std::to_string(v.get_uint64());
  else
    return kube::makeKubeError("expected a quantity");
  auto q = kube::Quantity::parse(text);
  if (!q)
    return kube::makeKubeError(q.error().message);
  return *q;
}

// Whether one numaNodeResources entry's resources hold CPU (Koordinator's NUMA-aware test);
// errors name the member below "resources".
kube::Expected<bool> holdsCPU(const json::object& resources) {
  if (resources.size() > kMaxResourceStatusResources)
    return kube::makeKubeError(fmt::format("more than {} resources", kMaxResourceStatusResources));
  bool cpu = false;
  for (const auto& [name, value] : resources) {
    auto q = quantityOf(value);
    if (!q)
      return kube::makeKubeError(fmt::format("{}: {}", std::string_view(name), q.error().message));
    if (name == "cpu" && !q->isZero())
      cpu = true;
    if (name == apis::kBatchCPU && q->sign() > 0)
      cpu = true;
  }
  return cpu;
}

kube::Expected<void> readNumaNodes(const json::value& v, PodResourceStatus& out) {
  if (v.is_null())
    return {};
  if (!v.is_array())
    return kube::makeKubeError("numaNodeResources: expected a list");
  const json::array& entries = v.get_array();
  if (entries.size() > kMaxResourceStatusNumaNodes)
    return kube::makeKubeError(
        fmt::format("numaNodeResources: more than {} entries", kMaxResourceStatusNumaNodes));
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const json::value& entry = entries[i];
    if (entry.is_null())
      continue;
    if (!entry.is_object())
      return kube::makeKubeError(fmt::format("numaNodeResources[{}]: expected an object", i));
    std::int32_t node = 0;
    if (const json::value* n = entry.get_object().if_contains("node");
        n != nullptr && !n->is_null()) {
      constexpr auto kMin = std::numeric_limits<std::int32_t>::min();
      constexpr auto kMax = std::numeric_limits<std::int32_t>::max();
      if (n->is_int64() && n->get_int64() >= kMin && n->get_int64() <= kMax)
        node = static_cast<std::int32_t>(n->get_int64());
      else if (n->is_uint64() && n->get_uint64() <= static_cast<std::uint64_t>(kMax))
        node = static_cast<std::int32_t>(n->get_uint64());
      else
        return kube::makeKubeError(fmt::format("numaNodeResources[{}].node: expected an int32", i));
    }
    const json::value* resources = entry.get_object().if_contains("resources");
    if (resources == nullptr || resources->is_null())
      continue;
    if (!resources->is_object())
      return kube::makeKubeError(
          fmt::format("numaNodeResources[{}].resources: expected an object", i));
    auto cpu = holdsCPU(resources->get_object());
    if (!cpu)
      return kube::makeKubeError(
          fmt::format("numaNodeResources[{}].resources.{}", i, cpu.error().message));
    if (*cpu)
      out.cpu_numa_nodes.push_back(node);
  }
  return {};
}

}  // namespace

kube::Expected<PodResourceStatus> parsePodResourceStatus(const kube::Annotations& annotations) {
  PodResourceStatus out;
  auto it = annotations.find(kAnnotationResourceStatus);
  if (it == annotations.end())
    return out;
  if (auto size = apis::checkValueSize("value", it->second, apis::kMaxAnnotationValueBytes); !size)
    return size.error();
  boost::system::error_code ec;
  const json::value v = json::parse(it->second, ec);
  if (ec)
    return kube::makeKubeError(fmt::format("not JSON: {}", ec.message()));
  if (v.is_null())
    return out;
  if (!v.is_object())
    return kube::makeKubeError("expected an object");
  const json::object& o = v.get_object();
  if (const json::value* cpuset = o.if_contains("cpuset");
      cpuset != nullptr && !cpuset->is_null()) {
    if (!cpuset->is_string())
      return kube::makeKubeError("cpuset: expected a string");
    out.cpuset = cpuset->get_string();
  }
  if (const json::value* numa = o.if_contains("numaNodeResources"); numa != nullptr) {
    if (auto r = readNumaNodes(*numa, out); !r)
      return r.error();
  }
  return out;
}

kube::Expected<std::optional<CPUSetBinding>> podCPUSetBinding(const kube::Labels& labels,
                                                              const PodResourceStatus& status) {
  if (status.cpuset.empty())
    return std::optional<CPUSetBinding>();
  const apis::QoSClass qos = apis::podQoSClassRaw(labels);
  if (qos != apis::QoSClass::kLSE && qos != apis::QoSClass::kLSR) {
    auto label = labels.find(apis::kLabelPodQoS);
    return kube::makeKubeError(fmt::format(
        "cpuset: ignored, since only LSE and LSR pods are bound to CPUs and the pod's {} is {}",
        apis::kLabelPodQoS, label == labels.end() ? "unset" : fmt::format("{:?}", label->second)));
  }
  auto cpus = cgroup::parseCpuList(status.cpuset);
  if (!cpus)
    return kube::makeKubeError(fmt::format("cpuset: {}", cpus.error().message));
  if (cpus->empty())
    return std::optional<CPUSetBinding>();
  return std::optional<CPUSetBinding>(CPUSetBinding{cgroup::formatCpuList(*cpus)});
}

kube::Expected<std::optional<CPUSetBinding>> podCPUSetBinding(
    const kube::Labels& labels, const kube::Annotations& annotations) {
  auto status = parsePodResourceStatus(annotations);
  if (!status)
    return status.error();
  return podCPUSetBinding(labels, *status);
}

}  // namespace koord::roles::koordlet
