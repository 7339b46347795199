#include "koord/apis/node_metric.h"
#include "koord/kube/json_fields.h"
#include "koord/kube/object_meta.h"

#include <boost/json.hpp>

#include <optional>

#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "koord/core/duration.h"
#include "koord/kube/decode.h"
#include "koord/kube/time.h"

namespace koord::apis {
namespace {

using namespace koord::kube::jsonfields;

namespace json = boost::json;
using kube::Expected;

Expected<std::optional<std::int64_t>> intField(const json::object& o, std::string_view name,
                                               std::string_view path) {
  const json::value* v = field(o, name);
  if (v == nullptr)
    return std::optional<std::int64_t>();
  if (v->is_int64())
    return std::optional<std::int64_t>(v->get_int64());
  if (v->is_uint64() && v->get_uint64() <= static_cast<std::uint64_t>(INT64_MAX))
    return std::optional<std::int64_t>(static_cast<std::int64_t>(v->get_uint64()));
  return typeError(childPath(path, name), "int64", *v);
}

Expected<std::chrono::nanoseconds> durationValue(const json::value& v, std::string_view path) {
  if (!v.is_string())
    return typeError(path, "duration string", v);
  auto d = parseGoDuration(v.get_string());
  if (!d)
    return kube::makeKubeError(
        fmt::format("{}: invalid duration \"{}\"", path, std::string_view(v.get_string())));
  return *d;
}

// Decodes each element of an array with decode(element, "path[i]"); null is an empty list, and
// null elements are skipped (Go keeps them as nil pointers, which nothing can use).
template <typename T, typename Fn>
Expected<std::vector<T>> eachObject(const json::object& o, std::string_view name,
                                    std::string_view path, Fn&& decode) {
  std::vector<T> out;
  const json::value* v = field(o, name);
  if (v == nullptr)
    return out;
  std::string list_path = childPath(path, name);
  if (!v->is_array())
    return typeError(list_path, "array", *v);
  const json::array& items = v->get_array();
  out.reserve(items.size());
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (items[i].is_null())
      continue;
    std::string item_path = fmt::format("{}[{}]", list_path, i);
    if (!items[i].is_object())
      return typeError(item_path, "object", items[i]);
    Expected<T> item = decode(items[i].get_object(), item_path);
    if (!item)
      return item.error();
    out.push_back(std::move(*item));
  }
  return out;
}

// slo/v1alpha1 ResourceMap: {"resources": ResourceList, "devices": [...]}.
Expected<kube::ResourceList> resourceMap(const json::object& o, std::string_view name,
                                         std::string_view path) {
  auto obj = objectField(o, name, path);
  if (!obj)
    return obj.error();
  if (*obj == nullptr)
    return kube::ResourceList();
  std::string map_path = childPath(path, name);
  const json::value* resources = field(**obj, "resources");
  if (resources == nullptr)
    return kube::ResourceList();
  return kube::decodeResourceList(*resources, childPath(map_path, "resources"));
}

Expected<AggregatedUsage> aggregatedUsage(const json::object& o, std::string_view path) {
  AggregatedUsage out;
  auto usage = objectField(o, "usage", path);
  if (!usage)
    return usage.error();
  if (*usage != nullptr) {
    std::string usage_path = childPath(path, "usage");
    for (const auto& kv : **usage) {
      std::string_view key = kv.key();
      if (kv.value().is_null())
        continue;
      std::string item_path = fmt::format("{}[{}]", usage_path, key);
      if (!kv.value().is_object())
        return typeError(item_path, "object", kv.value());
      kube::ResourceList list;
      if (const json::value* r = field(kv.value().get_object(), "resources")) {
        auto decoded = kube::decodeResourceList(*r, childPath(item_path, "resources"));
        if (!decoded)
          return decoded.error();
        list = std::move(*decoded);
      }
      out.usage.insert_or_assign(std::string(key), std::move(list));
    }
  }
  if (const json::value* d = field(o, "duration")) {
    auto duration = durationValue(*d, childPath(path, "duration"));
    if (!duration)
      return duration.error();
    out.duration = *duration;
  }
  return out;
}

Expected<NodeMetricInfo> nodeMetricInfo(const json::object& o, std::string_view path) {
  NodeMetricInfo out;
  auto node_usage = resourceMap(o, "nodeUsage", path);
  if (!node_usage)
    return node_usage.error();
  out.node_usage = std::move(*node_usage);
  auto system_usage = resourceMap(o, "systemUsage", path);
  if (!system_usage)
    return system_usage.error();
  out.system_usage = std::move(*system_usage);
  auto aggregated_node =
      eachObject<AggregatedUsage>(o, "aggregatedNodeUsages", path, aggregatedUsage);
  if (!aggregated_node)
    return aggregated_node.error();
  out.aggregated_node_usages = std::move(*aggregated_node);
  auto aggregated_system =
      eachObject<AggregatedUsage>(o, "aggregatedSystemUsages", path, aggregatedUsage);
  if (!aggregated_system)
    return aggregated_system.error();
  out.aggregated_system_usages = std::move(*aggregated_system);
  return out;
}

// podsMetric[] and hostApplicationMetric[] both carry priority and qos by name; an unknown name
// is kNone. Returns the error of a field that is not a string.
std::optional<kube::Error> priorityAndQoS(const json::object& o, std::string_view path,
                                          PriorityClass& priority, QoSClass& qos) {
  auto p = stringField(o, "priority", path);
  if (!p)
    return p.error();
  priority = priorityClassByName(*p);
  auto q = stringField(o, "qos", path);
  if (!q)
    return q.error();
  qos = qosClassByName(*q);
  return std::nullopt;
}

Expected<PodMetricInfo> podMetricInfo(const json::object& o, std::string_view path) {
  PodMetricInfo out;
  auto ns = stringField(o, "namespace", path);
  if (!ns)
    return ns.error();
  out.namespace_ = std::move(*ns);
  auto name = stringField(o, "name", path);
  if (!name)
    return name.error();
  out.name = std::move(*name);
  auto usage = resourceMap(o, "podUsage", path);
  if (!usage)
    return usage.error();
  out.pod_usage = std::move(*usage);
  if (auto error = priorityAndQoS(o, path, out.priority, out.qos))
    return std::move(*error);
  return out;
}

Expected<HostApplicationMetricInfo> hostAppMetricInfo(const json::object& o,
                                                      std::string_view path) {
  HostApplicationMetricInfo out;
  auto name = stringField(o, "name", path);
  if (!name)
    return name.error();
  out.name = std::move(*name);
  auto usage = resourceMap(o, "usage", path);
  if (!usage)
    return usage.error();
  out.usage = std::move(*usage);
  if (auto error = priorityAndQoS(o, path, out.priority, out.qos))
    return std::move(*error);
  return out;
}

Expected<NodeMetricCollectPolicy> collectPolicy(const json::object& o, std::string_view path) {
  NodeMetricCollectPolicy out;
  auto aggregate = intField(o, "aggregateDurationSeconds", path);
  if (!aggregate)
    return aggregate.error();
  out.aggregate_duration_seconds = *aggregate;
  auto report = intField(o, "reportIntervalSeconds", path);
  if (!report)
    return report.error();
  out.report_interval_seconds = *report;
  auto policy = objectField(o, "nodeAggregatePolicy", path);
  if (!policy)
    return policy.error();
  if (*policy != nullptr) {
    std::string policy_path = childPath(path, "nodeAggregatePolicy");
    std::vector<std::chrono::nanoseconds> durations;
    if (const json::value* list = field(**policy, "durations")) {
      std::string list_path = childPath(policy_path, "durations");
      if (!list->is_array())
        return typeError(list_path, "array", *list);
      for (std::size_t i = 0; i < list->get_array().size(); ++i) {
        auto d = durationValue(list->get_array()[i], fmt::format("{}[{}]", list_path, i));
        if (!d)
          return d.error();
        durations.push_back(*d);
      }
    }
    out.node_aggregate_durations = std::move(durations);
  }
  if (const json::value* memory = field(o, "nodeMemoryCollectPolicy")) {
    if (!memory->is_string())
      return typeError(childPath(path, "nodeMemoryCollectPolicy"), "string", *memory);
    out.node_memory_collect_policy = std::string(memory->get_string());
  }
  return out;
}

}  // namespace

kube::Expected<NodeMetric> decodeNodeMetric(const boost::json::value& v) {
  if (!v.is_object())
    return typeError("NodeMetric", "object", v);
  const json::object& root = v.get_object();
  NodeMetric out;

  kube::ObjectMeta meta;
  if (auto ok = kube::decodeObjectMeta(root, {.members = kube::ObjectMetaFields::kName}, meta);
      !ok) {
    return ok.error();
  }
  out.name = std::move(meta.name);

  auto spec = objectField(root, "spec", "");
  if (!spec)
    return spec.error();
  if (*spec != nullptr) {
    auto policy = objectField(**spec, "metricCollectPolicy", "spec");
    if (!policy)
      return policy.error();
    if (*policy != nullptr) {
      auto decoded = collectPolicy(**policy, "spec.metricCollectPolicy");
      if (!decoded)
        return decoded.error();
      out.collect_policy = std::move(*decoded);
    }
  }

  auto status = objectField(root, "status", "");
  if (!status)
    return status.error();
  if (*status == nullptr)
    return out;
  const json::object& st = **status;

  if (const json::value* t = field(st, "updateTime")) {
    if (!t->is_string())
      return typeError("status.updateTime", "RFC 3339 time string", *t);
    auto parsed = kube::parseTime(t->get_string());
    if (!parsed) {
      return kube::makeKubeError(fmt::format("status.updateTime: invalid RFC 3339 time \"{}\"",
                                             std::string_view(t->get_string())));
    }
    out.update_time = *parsed;
  }

  auto info = objectField(st, "nodeMetric", "status");
  if (!info)
    return info.error();
  if (*info != nullptr) {
    auto decoded = nodeMetricInfo(**info, "status.nodeMetric");
    if (!decoded)
      return decoded.error();
    out.node_metric = std::move(*decoded);
  }

  auto pods = eachObject<PodMetricInfo>(st, "podsMetric", "status", podMetricInfo);
  if (!pods)
    return pods.error();
  out.pods_metric = std::move(*pods);

  auto apps = eachObject<HostApplicationMetricInfo>(st, "hostApplicationMetric", "status",
                                                    hostAppMetricInfo);
  if (!apps)
    return apps.error();
  out.host_application_metric = std::move(*apps);

  auto reclaimable = objectField(st, "prodReclaimableMetric", "status");
  if (!reclaimable)
    return reclaimable.error();
  if (*reclaimable != nullptr) {
    // Only a present resources map counts: Koordinator's koordlet writes an empty
    // ReclaimableMetric when its prediction fails, and its MidResource degrades on a nil one.
    auto resource = objectField(**reclaimable, "resource", "status.prodReclaimableMetric");
    if (!resource)
      return resource.error();
    const json::value* resources = *resource != nullptr ? field(**resource, "resources") : nullptr;
    if (resources != nullptr && !resources->is_null()) {
      auto list =
          kube::decodeResourceList(*resources, "status.prodReclaimableMetric.resource.resources");
      if (!list)
        return list.error();
      out.prod_reclaimable = std::move(*list);
    }
  }
  return out;
}

}  // namespace koord::apis
