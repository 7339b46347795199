#include "runtimehooks/cpuset/cpuset_allocator.h"

#include <fmt/format.h>

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include "koord/cgroup/cpu_topology.h"

namespace koord::roles::koordlet {

kube::Expected<std::optional<CPUSetBinding>> podCPUSetBinding(
    const kube::Annotations& annotations) {
  auto it = annotations.find(kAnnotationResourceStatus);
  if (it == annotations.end())
    return std::optional<CPUSetBinding>();
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
  auto cpus = cgroup::parseCpuList(cpuset->get_string());
  if (!cpus)
    return kube::makeKubeError(fmt::format("cpuset: {}", cpus.error().message));
  if (cpus->empty())
    return std::optional<CPUSetBinding>();
  return std::optional<CPUSetBinding>(CPUSetBinding{cgroup::formatCpuList(*cpus)});
}

}  // namespace koord::roles::koordlet
