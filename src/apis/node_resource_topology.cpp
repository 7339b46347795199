// decodeNodeResourceTopology and its encoder, and Koordinator's CPU annotations of the
// NodeResourceTopology read and written as Go's encoding/json does for its types.
#include "koord/apis/node_resource_topology.h"

#include <boost/json.hpp>

#include <charconv>
#include <utility>

#include <fmt/format.h>

#include "crd_object.h"
#include "koord/apis/input_limits.h"
#include "koord/cgroup/cpu_topology.h"
#include "koord/kube/decode.h"
#include "koord/kube/json_fields.h"
#include "object_fields.h"

namespace koord::apis {

namespace json = boost::json;
using namespace koord::kube::jsonfields;
using kube::Expected;
using kube::makeKubeError;

namespace {

// ---- the object ----------------------------------------------------------------------------

Expected<void> noMember(const json::object&, NodeResourceTopology&) {
  return {};
}

// The quantity member `name`; zero when absent or null, as Go leaves a Quantity.
Expected<kube::Quantity> quantityField(const json::object& o, std::string_view name,
                                       std::string_view path) {
  const json::value* v = field(o, name);
  if (v == nullptr)
    return kube::Quantity();
  return kube::decodeQuantity(*v, childPath(path, name));
}

Expected<ZoneResourceInfo> decodeResourceInfo(const json::object& o, std::string_view path) {
  ZoneResourceInfo out;
  if (auto ok = detail::readStrings(o, path, {{"name", &out.name}}); !ok)
    return ok.error();
  for (const auto& [name, target] :
       {std::pair<std::string_view, kube::Quantity*>{"capacity", &out.capacity},
        {"allocatable", &out.allocatable},
        {"available", &out.available}}) {
    auto q = quantityField(o, name, path);
    if (!q)
      return q.error();
    *target = *q;
  }
  return out;
}

Expected<ZoneCost> decodeCost(const json::object& o, std::string_view path) {
  ZoneCost out;
  if (auto ok = detail::readStrings(o, path, {{"name", &out.name}}); !ok)
    return ok.error();
  auto value = int64Field(o, "value", path);
  if (!value)
    return value.error();
  out.value = *value;
  return out;
}

Expected<ZoneAttribute> decodeAttribute(const json::object& o, std::string_view path) {
  ZoneAttribute out;
  if (auto ok = detail::readStrings(o, path, {{"name", &out.name}, {"value", &out.value}}); !ok)
    return ok.error();
  return out;
}

Expected<Zone> decodeZone(const json::object& o, std::string_view path) {
  Zone out;
  if (auto ok = detail::readStrings(
          o, path, {{"name", &out.name}, {"type", &out.type}, {"parent", &out.parent}});
      !ok)
    return ok.error();
  auto costs = detail::objectsOf<ZoneCost>(o, "costs", path, kMaxNRTZoneCosts, decodeCost);
  if (!costs)
    return costs.error();
  out.costs = std::move(*costs);
  auto attributes = detail::objectsOf<ZoneAttribute>(o, "attributes", path, kMaxNRTZoneAttributes,
                                                     decodeAttribute);
  if (!attributes)
    return attributes.error();
  out.attributes = std::move(*attributes);
  auto resources = detail::objectsOf<ZoneResourceInfo>(o, "resources", path, kMaxNRTZoneResources,
                                                       decodeResourceInfo);
  if (!resources)
    return resources.error();
  out.resources = std::move(*resources);
  return out;
}

Expected<std::vector<std::string>> boundedStrings(const json::object& o, std::string_view name,
                                                  std::size_t limit) {
  std::vector<std::string> out;
  auto items = detail::boundedArray(o, name, "", limit);
  if (!items)
    return items.error();
  if (*items == nullptr)
    return out;
  for (std::size_t i = 0; i < (*items)->size(); ++i) {
    const json::value& e = (**items)[i];
    if (e.is_null()) {
      out.emplace_back();
      continue;
    }
    if (!e.is_string())
      return typeError(indexPath(name, i), "string", e);
    out.emplace_back(e.get_string());
  }
  return out;
}

json::object zoneJson(const Zone& z) {
  json::object o;
  o["name"] = z.name;
  o["type"] = z.type;
  if (!z.parent.empty())
    o["parent"] = z.parent;
  if (!z.costs.empty()) {
    json::array costs;
    for (const auto& c : z.costs)
      costs.push_back(json::object{{"name", c.name}, {"value", c.value}});
    o["costs"] = std::move(costs);
  }
  if (!z.attributes.empty()) {
    json::array attributes;
    for (const auto& a : z.attributes)
      attributes.push_back(json::object{{"name", a.name}, {"value", a.value}});
    o["attributes"] = std::move(attributes);
  }
  if (!z.resources.empty()) {
    json::array resources;
    for (const auto& r : z.resources) {
      resources.push_back(json::object{{"name", r.name},
                                       {"capacity", r.capacity.toString()},
                                       {"allocatable", r.allocatable.toString()},
                                       {"available", r.available.toString()}});
    }
    o["resources"] = std::move(resources);
  }
  return o;
}

json::object labelsJson(const kube::Labels& labels) {
  json::object o;
  for (const auto& [k, v] : labels)
    o[k] = v;
  return o;
}

// ---- the annotations -----------------------------------------------------------------------

kube::Error keyed(std::string_view key, const kube::Error& e) {
  return makeKubeError(fmt::format("{}: {}", key, e.message));
}

// The annotation's JSON: nullopt when absent or null; errors name the key.
Expected<std::optional<json::value>> annotationJson(const kube::Labels& annotations,
                                                    std::string_view key) {
  auto parsed = detail::parseAnnotationJson(annotations, key, kMaxAnnotationValueBytes);
  if (!parsed)
    return parsed.error();
  if (!*parsed)
    return std::optional<json::value>();
  if ((*parsed)->syntax_error)
    return makeKubeError(fmt::format("{}: not JSON", key));
  if ((*parsed)->value.is_null())
    return std::optional<json::value>();
  return std::optional<json::value>(std::move((*parsed)->value));
}

// The int32 member `name`; 0 when absent or null.
Expected<std::int32_t> int32Field(const json::object& o, std::string_view name,
                                  std::string_view path) {
  const json::value* v = field(o, name);
  if (v == nullptr)
    return 0;
  return int32Value(*v, childPath(path, name));
}

// A string member bounded by `limit` bytes; "" when absent or null.
Expected<std::string> boundedString(const json::object& o, std::string_view name,
                                    std::string_view path, std::size_t limit) {
  auto s = stringField(o, name, path);
  if (!s)
    return s.error();
  if (s->size() > limit) {
    return makeKubeError(fmt::format("{}: {} bytes, more than the {} allowed",
                                     childPath(path, name), s->size(), limit));
  }
  return s;
}

// A CPU list member: at most as long as parseCpuList reads.
Expected<std::string> cpusetField(const json::object& o, std::string_view path) {
  return boundedString(o, "cpuset", path, cgroup::kMaxCpuListBytes);
}

// Names, uids and the like: far longer than any Kubernetes name.
constexpr std::size_t kMaxNameBytes = 1024;

Expected<CPUInfo> decodeCPUInfo(const json::object& o, std::string_view path) {
  CPUInfo out;
  for (const auto& [name, target] : {std::pair<std::string_view, std::int32_t*>{"id", &out.id},
                                     {"core", &out.core},
                                     {"socket", &out.socket},
                                     {"node", &out.node}}) {
    auto n = int32Field(o, name, path);
    if (!n)
      return n.error();
    if (*n < 0)
      return makeKubeError(fmt::format("{}: {} is negative", childPath(path, name), *n));
    *target = *n;
  }
  if (out.id > cgroup::kMaxCpuId) {
    return makeKubeError(fmt::format("{}: {} is above the largest CPU id {}", childPath(path, "id"),
                                     out.id, cgroup::kMaxCpuId));
  }
  return out;
}

Expected<CPUSharedPool> decodeSharedPool(const json::object& o, std::string_view path) {
  CPUSharedPool out;
  auto socket = int32Field(o, "socket", path);
  if (!socket)
    return socket.error();
  out.socket = *socket;
  auto node = int32Field(o, "node", path);
  if (!node)
    return node.error();
  out.node = *node;
  auto cpuset = cpusetField(o, path);
  if (!cpuset)
    return cpuset.error();
  out.cpuset = std::move(*cpuset);
  return out;
}

Expected<PodCPUAlloc> decodePodCPUAlloc(const json::object& o, std::string_view path) {
  PodCPUAlloc out;
  for (const auto& [name, target] :
       {std::pair<std::string_view, std::string*>{"namespace", &out.namespace_},
        {"name", &out.name},
        {"uid", &out.uid}}) {
    auto s = boundedString(o, name, path, kMaxNameBytes);
    if (!s)
      return s.error();
    *target = std::move(*s);
  }
  auto cpuset = cpusetField(o, path);
  if (!cpuset)
    return cpuset.error();
  out.cpuset = std::move(*cpuset);
  auto managed = boolField(o, "managedByKubelet", path);
  if (!managed)
    return managed.error();
  out.managed_by_kubelet = *managed;
  return out;
}

// The items of `a`, each an object (null: the zero value, as Go leaves it) through
// decode(object, "path[i]"); at most kMaxNRTAnnotationItems.
template <typename T, typename Fn>
Expected<std::vector<T>> objectItems(const json::array& a, std::string_view path, Fn&& decode) {
  if (a.size() > kMaxNRTAnnotationItems) {
    return makeKubeError(fmt::format("{}{} items, more than the {} allowed",
                                     path.empty() ? "" : fmt::format("{}: ", path), a.size(),
                                     kMaxNRTAnnotationItems));
  }
  std::vector<T> out;
  out.reserve(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    const std::string item_path = indexPath(path, i);
    if (a[i].is_null()) {
      out.emplace_back();
      continue;
    }
    if (!a[i].is_object())
      return typeError(item_path, "object", a[i]);
    auto item = decode(a[i].get_object(), item_path);
    if (!item)
      return item.error();
    out.push_back(std::move(*item));
  }
  return out;
}

// The annotation holding a JSON list of objects (Go: a slice of structs).
template <typename T, typename Fn>
Expected<std::vector<T>> annotationList(const kube::Labels& annotations, std::string_view key,
                                        Fn&& decode) {
  auto v = annotationJson(annotations, key);
  if (!v)
    return v.error();
  if (!*v)
    return std::vector<T>();
  if (!(*v)->is_array())
    return keyed(key, typeError("", "array", **v));
  auto items = objectItems<T>((*v)->get_array(), "", decode);
  if (!items)
    return keyed(key, items.error());
  return items;
}

template <typename T>
std::string listValue(std::span<const T> items, json::object (*encode)(const T&)) {
  if (items.empty())
    return "null";
  json::array a;
  a.reserve(items.size());
  for (const auto& item : items)
    a.push_back(encode(item));
  return json::serialize(a);
}

json::object sharedPoolJson(const CPUSharedPool& p) {
  json::object o{{"socket", p.socket}, {"node", p.node}};
  if (!p.cpuset.empty())
    o["cpuset"] = p.cpuset;
  return o;
}

json::object podCPUAllocJson(const PodCPUAlloc& a) {
  json::object o;
  if (!a.namespace_.empty())
    o["namespace"] = a.namespace_;
  if (!a.name.empty())
    o["name"] = a.name;
  if (!a.uid.empty())
    o["uid"] = a.uid;
  if (!a.cpuset.empty())
    o["cpuset"] = a.cpuset;
  if (a.managed_by_kubelet)
    o["managedByKubelet"] = true;
  return o;
}

}  // namespace

std::string nodeZoneName(int numa_node) {
  return fmt::format("node-{}", numa_node);
}

std::optional<int> numaNodeOfZone(std::string_view zone_name) {
  constexpr std::string_view kPrefix = "node-";
  if (!zone_name.starts_with(kPrefix))
    return std::nullopt;
  const std::string_view digits = zone_name.substr(kPrefix.size());
  if (digits.empty() || digits.front() < '0' || digits.front() > '9')
    return std::nullopt;
  int n = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
  if (ec != std::errc() || end != digits.data() + digits.size())
    return std::nullopt;
  return n;
}

const ZoneResourceInfo* Zone::resource(std::string_view resource_name) const {
  for (const auto& r : resources) {
    if (r.name == resource_name)
      return &r;
  }
  return nullptr;
}

const Zone* NodeResourceTopology::zone(std::string_view zone_name) const {
  for (const auto& z : zones) {
    if (z.name == zone_name)
      return &z;
  }
  return nullptr;
}

Expected<NodeResourceTopology> decodeNodeResourceTopology(const json::value& v) {
  auto out = detail::decodeCrd<NodeResourceTopology>(v, "NodeResourceTopology", noMember, noMember);
  if (!out)
    return out;
  const json::object& root = v.get_object();
  auto policies = boundedStrings(root, "topologyPolicies", kMaxNRTTopologyPolicies);
  if (!policies)
    return policies.error();
  out->topology_policies = std::move(*policies);
  auto zones = detail::objectsOf<Zone>(root, "zones", "", kMaxNRTZones, decodeZone);
  if (!zones)
    return zones.error();
  out->zones = std::move(*zones);
  return out;
}

json::value encodeNodeResourceTopology(const NodeResourceTopology& nrt) {
  json::object meta;
  meta["name"] = nrt.name;
  if (!nrt.uid.empty())
    meta["uid"] = nrt.uid;
  if (!nrt.resource_version.empty())
    meta["resourceVersion"] = nrt.resource_version;
  if (!nrt.labels.empty())
    meta["labels"] = labelsJson(nrt.labels);
  if (!nrt.annotations.empty())
    meta["annotations"] = labelsJson(nrt.annotations);
  json::array policies;
  for (const auto& p : nrt.topology_policies)
    policies.emplace_back(p);
  json::array zones;
  for (const auto& z : nrt.zones)
    zones.push_back(zoneJson(z));
  return json::object{
      {"apiVersion", fmt::format("{}/{}", kTopologyGroup, kTopologyVersion)},
      {"kind", kNodeResourceTopologyKind},
      {"metadata", std::move(meta)},
      {"topologyPolicies", std::move(policies)},
      {"zones", std::move(zones)},
  };
}

Expected<CPUTopology> parseCPUTopologyAnnotation(const kube::Labels& annotations) {
  constexpr std::string_view kKey = kAnnotationNodeCPUTopology;
  auto v = annotationJson(annotations, kKey);
  if (!v)
    return v.error();
  CPUTopology out;
  if (!*v)
    return out;
  if (!(*v)->is_object())
    return keyed(kKey, typeError("", "object", **v));
  const json::value* detail = field((*v)->get_object(), "detail");
  if (detail == nullptr)
    return out;
  if (!detail->is_array())
    return keyed(kKey, typeError("detail", "array", *detail));
  auto cpus = objectItems<CPUInfo>(detail->get_array(), "detail", decodeCPUInfo);
  if (!cpus)
    return keyed(kKey, cpus.error());
  out.detail = std::move(*cpus);
  return out;
}

Expected<std::vector<CPUSharedPool>> parseCPUSharedPools(const kube::Labels& annotations,
                                                         std::string_view key) {
  return annotationList<CPUSharedPool>(annotations, key, decodeSharedPool);
}

Expected<std::vector<PodCPUAlloc>> parsePodCPUAllocs(const kube::Labels& annotations) {
  return annotationList<PodCPUAlloc>(annotations, kAnnotationNodeCPUAllocs, decodePodCPUAlloc);
}

Expected<KubeletCPUManagerPolicy> parseKubeletCPUManagerPolicy(const kube::Labels& annotations) {
  constexpr std::string_view kKey = kAnnotationKubeletCPUManagerPolicy;
  auto v = annotationJson(annotations, kKey);
  if (!v)
    return v.error();
  KubeletCPUManagerPolicy out;
  if (!*v)
    return out;
  if (!(*v)->is_object())
    return keyed(kKey, typeError("", "object", **v));
  const json::object& o = (*v)->get_object();
  auto policy = boundedString(o, "policy", "", kMaxNameBytes);
  if (!policy)
    return keyed(kKey, policy.error());
  out.policy = std::move(*policy);
  auto reserved = boundedString(o, "reservedCPUs", "", cgroup::kMaxCpuListBytes);
  if (!reserved)
    return keyed(kKey, reserved.error());
  out.reserved_cpus = std::move(*reserved);
  if (const json::value* options = field(o, "options")) {
    if (!options->is_object())
      return keyed(kKey, typeError("options", "object", *options));
    if (options->get_object().size() > kMaxKubeletCPUManagerOptions) {
      return makeKubeError(fmt::format("{}: options: {} entries, more than the {} allowed", kKey,
                                       options->get_object().size(), kMaxKubeletCPUManagerOptions));
    }
    for (const auto& kv : options->get_object()) {
      const std::string path = childPath("options", kv.key());
      if (kv.key().size() > kMaxNameBytes)
        return makeKubeError(
            fmt::format("{}: options: a name of {} bytes, more than the {} allowed", kKey,
                        kv.key().size(), kMaxNameBytes));
      std::string value;
      if (kv.value().is_string()) {
        if (kv.value().get_string().size() > kMaxNameBytes) {
          return makeKubeError(fmt::format("{}: {}: {} bytes, more than the {} allowed", kKey, path,
                                           kv.value().get_string().size(), kMaxNameBytes));
        }
        value = kv.value().get_string();
      } else if (!kv.value().is_null()) {
        return keyed(kKey, typeError(path, "string", kv.value()));
      }
      out.options.insert_or_assign(std::string(kv.key()), std::move(value));
    }
  }
  return out;
}

Expected<std::optional<CPUBasicInfo>> parseCPUBasicInfo(const kube::Labels& annotations) {
  constexpr std::string_view kKey = kAnnotationCPUBasicInfo;
  auto parsed = detail::parseAnnotationJson(annotations, kKey, kMaxAnnotationValueBytes);
  if (!parsed)
    return parsed.error();
  if (!*parsed)
    return std::optional<CPUBasicInfo>();
  if ((*parsed)->syntax_error)
    return makeKubeError(fmt::format("{}: not JSON", kKey));
  CPUBasicInfo out;
  const json::value& v = (*parsed)->value;
  if (v.is_null())
    return std::optional<CPUBasicInfo>(out);
  if (!v.is_object())
    return keyed(kKey, typeError("", "object", v));
  const json::object& o = v.get_object();
  for (const auto& [name, target] :
       {std::pair<std::string_view, std::string*>{"cpuModel", &out.cpu_model},
        {"catL3CbmMask", &out.cat_l3_cbm_mask},
        {"vendorID", &out.vendor_id}}) {
    auto s = boundedString(o, name, "", kMaxNameBytes);
    if (!s)
      return keyed(kKey, s.error());
    *target = std::move(*s);
  }
  for (const auto& [name, target] :
       {std::pair<std::string_view, bool*>{"hyperThreadEnabled", &out.hyper_thread_enabled},
        {"turboEnabled", &out.turbo_enabled}}) {
    auto b = boolField(o, name, "");
    if (!b)
      return keyed(kKey, b.error());
    *target = *b;
  }
  return std::optional<CPUBasicInfo>(std::move(out));
}

std::string formatCPUTopology(const CPUTopology& topology) {
  json::object o;
  if (!topology.detail.empty()) {
    json::array detail;
    detail.reserve(topology.detail.size());
    for (const auto& c : topology.detail) {
      detail.push_back(
          json::object{{"id", c.id}, {"core", c.core}, {"socket", c.socket}, {"node", c.node}});
    }
    o["detail"] = std::move(detail);
  }
  return json::serialize(o);
}

std::string formatCPUSharedPools(std::span<const CPUSharedPool> pools) {
  return listValue<CPUSharedPool>(pools, sharedPoolJson);
}

std::string formatPodCPUAllocs(std::span<const PodCPUAlloc> allocs) {
  return listValue<PodCPUAlloc>(allocs, podCPUAllocJson);
}

std::string formatKubeletCPUManagerPolicy(const KubeletCPUManagerPolicy& policy) {
  json::object o;
  if (!policy.policy.empty())
    o["policy"] = policy.policy;
  if (!policy.options.empty()) {
    json::object options;
    for (const auto& [k, v] : policy.options)
      options[k] = v;
    o["options"] = std::move(options);
  }
  if (!policy.reserved_cpus.empty())
    o["reservedCPUs"] = policy.reserved_cpus;
  return json::serialize(o);
}

std::string formatCPUBasicInfo(const CPUBasicInfo& info) {
  json::object o;
  if (!info.cpu_model.empty())
    o["cpuModel"] = info.cpu_model;
  if (info.hyper_thread_enabled)
    o["hyperThreadEnabled"] = true;
  if (info.turbo_enabled)
    o["turboEnabled"] = true;
  if (!info.cat_l3_cbm_mask.empty())
    o["catL3CbmMask"] = info.cat_l3_cbm_mask;
  if (!info.vendor_id.empty())
    o["vendorID"] = info.vendor_id;
  return json::serialize(o);
}

}  // namespace koord::apis
