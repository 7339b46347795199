#include "runtimehooks/cpuset/cpuset_allocator.h"

#include <fmt/format.h>

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include "koord/apis/extension.h"
#include "koord/apis/input_limits.h"
#include "koord/cgroup/cpu_topology.h"

namespace koord::roles::koordlet {

kube::Expected<std::optional<CPUSetBinding>> podCPUSetBinding(
    const kube::Labels& labels, const kube::Annotations& annotations) {
  auto it = annotations.find(kAnnotationResourceStatus);
  if (it == annotations.end())
    return std::optional<CPUSetBinding>();
  if (auto size = apis::checkValueSize("value", it->second, apis::kMaxAnnotationValueBytes); !size)
    return size.error();
  boost::system::error_code ec;
  const boost::json::value v = boost::json::parse(it->second, ec);
  if (ec)
    return kube::makeKubeError(fmt::format("not JSON: {}", ec.message()));
  if (v.is_null())
    return std::optional<CPUSetBinding>();
  if (!v.is_object())
    return kube::makeKubeError("expected an object");
  const boost::json::value* cpuset = v.get_object().if_contains("cpuset");
  if (cpuset == nullptr || cpuset->is_null())
    return std::optional<CPUSetBinding>();
  if (!cpuset->is_string())
    return kube::makeKubeError("cpuset: expected a string");
  if (cpuset->get_string().empty())
    return std::optional<CPUSetBinding>();
  const apis::QoSClass qos = apis::podQoSClassRaw(labels);
  if (qos != apis::QoSClass::kLSE && qos != apis::QoSClass::kLSR) {
    auto label = labels.find(apis::kLabelPodQoS);
    return kube::makeKubeError(fmt::format(
        "cpuset: ignored, since only LSE and LSR pods are bound to CPUs and the pod's {} is {}",
        apis::kLabelPodQoS, label == labels.end() ? "unset" : fmt::format("{:?}", label->second)));
  }
  auto cpus = cgroup::parseCpuList(cpuset->get_string());
  if (!cpus)
    return kube::makeKubeError(fmt::format("cpuset: {}", cpus.error().message));
  if (cpus->empty())
    return std::optional<CPUSetBinding>();
  return std::optional<CPUSetBinding>(CPUSetBinding{cgroup::formatCpuList(*cpus)});
}

}  // namespace koord::roles::koordlet
