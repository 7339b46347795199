// Reading and writing the resource-spec, numa-topology-spec and resource-status annotations.
#include "plugins/nodenumaresource/resource_spec.h"

#include <boost/json.hpp>

#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "koord/apis/input_limits.h"
#include "koord/kube/decode.h"
#include "koord/kube/json_fields.h"

namespace koord::roles::scheduler::nodenumaresource {

namespace json = boost::json;
using namespace koord::kube::jsonfields;

namespace {

Error under(std::string_view key, const Error& e) {
  return invalidArgument(fmt::format("{}: {}", key, e.message));
}

// The value as a JSON object; nullptr for JSON null (nothing set).
Expected<json::value> parseValue(std::string_view key, std::string_view value) {
  if (auto size = apis::checkValueSize(key, value, apis::kMaxAnnotationValueBytes); !size)
    return size.error();
  boost::system::error_code ec;
  json::value v = json::parse(value, ec);
  if (ec)
    return invalidArgument(fmt::format("{}: not JSON: {}", key, ec.message()));
  if (!v.is_null() && !v.is_object())
    return under(key, typeError("", "object", v));
  return v;
}

template <typename E>
Expected<E> enumField(const json::object& o, std::string_view name,
                      std::optional<E> (*parse)(std::string_view)) {
  auto text = stringField(o, name, "");
  if (!text)
    return text.error();
  auto value = parse(*text);
  if (!value)
    return invalidArgument(fmt::format("{}: unknown value \"{}\"", name, *text));
  return *value;
}

Expected<ResourceSpec> specOf(const json::object& o) {
  ResourceSpec out;
  auto required = enumField<CpuBindPolicy>(o, "requiredCPUBindPolicy", parseCpuBindPolicy);
  if (!required)
    return required.error();
  auto preferred = enumField<CpuBindPolicy>(o, "preferredCPUBindPolicy", parseCpuBindPolicy);
  if (!preferred)
    return preferred.error();
  auto exclusive =
      enumField<CpuExclusivePolicy>(o, "preferredCPUExclusivePolicy", parseCpuExclusivePolicy);
  if (!exclusive)
    return exclusive.error();
  out.required_cpu_bind_policy = *required;
  out.preferred_cpu_bind_policy = *preferred;
  out.preferred_cpu_exclusive_policy = *exclusive;
  return out;
}

Expected<NumaTopologySpec> numaSpecOf(const json::object& o) {
  NumaTopologySpec out;
  auto policy = enumField<NumaTopologyPolicy>(o, "numaTopologyPolicy", parseNumaTopologyPolicy);
  if (!policy)
    return policy.error();
  auto exclusive = enumField<NumaExclusive>(o, "singleNUMANodeExclusive", parseNumaExclusive);
  if (!exclusive)
    return exclusive.error();
  out.numa_topology_policy = *policy;
  out.single_numa_node_exclusive = *exclusive;
  return out;
}

Expected<ResourceStatus> statusOf(const json::object& o) {
  ResourceStatus out;
  auto cpuset = stringField(o, "cpuset", "");
  if (!cpuset)
    return cpuset.error();
  auto cpus = CpuSet::parse(*cpuset);
  if (!cpus)
    return invalidArgument(fmt::format("cpuset: {}", cpus.error().message));
  out.cpuset = std::move(*cpus);
  const json::value* list = field(o, "numaNodeResources");
  if (list == nullptr)
    return out;
  if (!list->is_array())
    return typeError("numaNodeResources", "array", *list);
  const json::array& items = list->get_array();
  if (items.size() > static_cast<std::size_t>(kMaxNumaNodeId) + 1)
    return invalidArgument(
        fmt::format("numaNodeResources: {} entries, at most {}", items.size(), kMaxNumaNodeId + 1));
  for (std::size_t i = 0; i < items.size(); ++i) {
    const std::string path = indexPath("numaNodeResources", i);
    if (!items[i].is_object())
      return typeError(path, "object", items[i]);
    const json::object& item = items[i].get_object();
    NumaNodeResourceStatus entry;
    if (const json::value* node = field(item, "node")) {
      auto n = int32Value(*node, childPath(path, "node"));
      if (!n)
        return n.error();
      entry.node = *n;
    }
    if (entry.node < 0 || entry.node > kMaxNumaNodeId)
      return invalidArgument(
          fmt::format("{}.node: {} outside [0, {}]", path, entry.node, kMaxNumaNodeId));
    for (const NumaNodeResourceStatus& seen : out.numa_node_resources) {
      if (seen.node == entry.node)
        return invalidArgument(fmt::format("{}.node: NUMA node {} listed twice", path, entry.node));
    }
    if (const json::value* resources = field(item, "resources")) {
      auto decoded = kube::decodeResourceList(*resources, childPath(path, "resources"));
      if (!decoded)
        return decoded.error();
      entry.resources = std::move(*decoded);
    }
    out.numa_node_resources.push_back(std::move(entry));
  }
  return out;
}

template <typename T, typename Fn>
Expected<T> parseAnnotation(std::string_view key, std::string_view value, Fn&& decode) {
  auto v = parseValue(key, value);
  if (!v)
    return v.error();
  if (v->is_null())
    return T{};
  auto decoded = decode(v->get_object());
  if (!decoded)
    return under(key, decoded.error());
  return std::move(*decoded);
}

}  // namespace

Expected<ResourceSpec> parseResourceSpec(std::string_view value) {
  return parseAnnotation<ResourceSpec>(kAnnotationResourceSpec, value, specOf);
}

Expected<ResourceSpec> podResourceSpec(const kube::Annotations& annotations) {
  auto it = annotations.find(kAnnotationResourceSpec);
  if (it == annotations.end())
    return ResourceSpec{};
  return parseResourceSpec(it->second);
}

std::string formatResourceSpec(const ResourceSpec& spec) {
  json::object o;
  if (spec.required_cpu_bind_policy != CpuBindPolicy::kNone)
    o["requiredCPUBindPolicy"] = toString(spec.required_cpu_bind_policy);
  if (spec.preferred_cpu_bind_policy != CpuBindPolicy::kNone)
    o["preferredCPUBindPolicy"] = toString(spec.preferred_cpu_bind_policy);
  if (spec.preferred_cpu_exclusive_policy != CpuExclusivePolicy::kNone)
    o["preferredCPUExclusivePolicy"] = toString(spec.preferred_cpu_exclusive_policy);
  return json::serialize(o);
}

Expected<NumaTopologySpec> parseNumaTopologySpec(std::string_view value) {
  return parseAnnotation<NumaTopologySpec>(kAnnotationNUMATopologySpec, value, numaSpecOf);
}

Expected<NumaTopologySpec> podNumaTopologySpec(const kube::Annotations& annotations) {
  auto it = annotations.find(kAnnotationNUMATopologySpec);
  if (it == annotations.end())
    return NumaTopologySpec{};
  return parseNumaTopologySpec(it->second);
}

Expected<ResourceStatus> parseResourceStatus(std::string_view value) {
  return parseAnnotation<ResourceStatus>(kAnnotationResourceStatus, value, statusOf);
}

Expected<std::optional<ResourceStatus>> podResourceStatus(const kube::Annotations& annotations) {
  auto it = annotations.find(kAnnotationResourceStatus);
  if (it == annotations.end())
    return std::optional<ResourceStatus>();
  auto status = parseResourceStatus(it->second);
  if (!status)
    return status.error();
  return std::optional<ResourceStatus>(std::move(*status));
}

std::string formatResourceStatus(const ResourceStatus& status) {
  json::object o;
  if (!status.cpuset.empty())
    o["cpuset"] = status.cpuset.toString();
  if (!status.numa_node_resources.empty()) {
    json::array list;
    for (const NumaNodeResourceStatus& r : status.numa_node_resources) {
      json::object entry;
      entry["node"] = r.node;
      if (!r.resources.empty()) {
        json::object resources;
        for (const auto& [name, q] : r.resources)
          resources[name] = q.toString();
        entry["resources"] = std::move(resources);
      }
      list.push_back(std::move(entry));
    }
    o["numaNodeResources"] = std::move(list);
  }
  return json::serialize(o);
}

std::optional<PodAllocation> podAllocationFromStatus(std::string_view uid,
                                                     std::string_view namespace_,
                                                     std::string_view name,
                                                     const ResourceStatus& status,
                                                     const ResourceSpec& spec) {
  if (status.cpuset.empty() && status.numa_node_resources.empty())
    return std::nullopt;
  PodAllocation a;
  a.uid = std::string(uid);
  a.namespace_ = std::string(namespace_);
  a.name = std::string(name);
  a.cpus = status.cpuset;
  a.exclusive = spec.preferred_cpu_exclusive_policy;
  for (const NumaNodeResourceStatus& r : status.numa_node_resources)
    a.numa_resources.push_back(NumaNodeResources{r.node, NumaResources::fromList(r.resources)});
  std::sort(a.numa_resources.begin(), a.numa_resources.end(),
            [](const NumaNodeResources& x, const NumaNodeResources& y) { return x.node < y.node; });
  return a;
}

ResourceStatus resourceStatusOf(const PodAllocation& allocation) {
  ResourceStatus s;
  s.cpuset = allocation.cpus;
  for (const NumaNodeResources& r : allocation.numa_resources)
    s.numa_node_resources.push_back(NumaNodeResourceStatus{r.node, r.resources.toList()});
  return s;
}

}  // namespace koord::roles::scheduler::nodenumaresource
