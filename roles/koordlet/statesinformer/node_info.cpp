#include "statesinformer/node_info.h"

#include <boost/json.hpp>

#include "koord/kube/decode.h"
#include "koord/kube/json_fields.h"

namespace koord::roles::koordlet {

namespace json = boost::json;
namespace jf = kube::jsonfields;

kube::Expected<NodeInfo> decodeNodeInfo(const json::value& v) {
  if (!v.is_object())
    return jf::typeError("node", "object", v);
  const auto& o = v.as_object();
  NodeInfo n;
  auto meta = jf::objectField(o, "metadata", "");
  if (!meta)
    return meta.error();
  if (*meta == nullptr)
    return kube::makeKubeError("metadata: missing");
  auto name = jf::stringField(**meta, "name", "metadata");
  if (!name)
    return name.error();
  n.name = std::move(*name);
  auto uid = jf::stringField(**meta, "uid", "metadata");
  if (!uid)
    return uid.error();
  n.uid = std::move(*uid);
  if (const auto* l = jf::field(**meta, "labels")) {
    auto labels = kube::decodeStringMap(*l, "metadata.labels");
    if (!labels)
      return labels.error();
    n.labels = std::move(*labels);
  }
  if (const auto* a = jf::field(**meta, "annotations")) {
    auto annotations = kube::decodeStringMap(*a, "metadata.annotations");
    if (!annotations)
      return annotations.error();
    n.annotations = std::move(*annotations);
  }
  auto status = jf::objectField(o, "status", "");
  if (!status)
    return status.error();
  if (*status == nullptr)
    return n;
  if (const auto* c = jf::field(**status, "capacity")) {
    auto r = kube::decodeResourceList(*c, "status.capacity");
    if (!r)
      return r.error();
    n.capacity = std::move(*r);
  }
  if (const auto* a = jf::field(**status, "allocatable")) {
    auto r = kube::decodeResourceList(*a, "status.allocatable");
    if (!r)
      return r.error();
    n.allocatable = std::move(*r);
  }
  if (const auto* addrs = jf::field(**status, "addresses"); addrs && addrs->is_array()) {
    for (const auto& a : addrs->as_array()) {
      if (!a.is_object())
        continue;
      auto type = jf::stringField(a.as_object(), "type", "status.addresses");
      auto address = jf::stringField(a.as_object(), "address", "status.addresses");
      if (type && address && !address->empty())
        n.addresses.emplace_back(std::move(*type), std::move(*address));
    }
  }
  if (const auto* de = jf::field(**status, "daemonEndpoints"); de && de->is_object()) {
    if (const auto* ke = jf::field(de->as_object(), "kubeletEndpoint"); ke && ke->is_object()) {
      if (const auto* port = jf::field(ke->as_object(), "Port");
          port && port->is_int64() && port->as_int64() > 0 && port->as_int64() < 65536)
        n.kubelet_port = static_cast<int>(port->as_int64());
    }
  }
  return n;
}

std::string kubeletAddress(const NodeInfo& node, std::string_view preferred_type) {
  for (const auto& [type, address] : node.addresses) {
    if (type == preferred_type)
      return address;
  }
  return node.addresses.empty() ? std::string() : node.addresses.front().second;
}

kube::Expected<NodeSLOInfo> decodeNodeSLOInfo(const json::value& v) {
  if (!v.is_object())
    return jf::typeError("NodeSLO", "object", v);
  const auto& o = v.as_object();
  NodeSLOInfo info;
  auto meta = jf::objectField(o, "metadata", "");
  if (!meta)
    return meta.error();
  if (*meta != nullptr) {
    auto name = jf::stringField(**meta, "name", "metadata");
    if (!name)
      return name.error();
    info.name = std::move(*name);
  }
  auto spec = jf::objectField(o, "spec", "");
  if (!spec)
    return spec.error();
  auto take = [&](std::string_view field) -> kube::Expected<std::shared_ptr<const json::object>> {
    if (*spec == nullptr)
      return std::shared_ptr<const json::object>();
    auto obj = jf::objectField(**spec, field, "spec");
    if (!obj)
      return obj.error();
    if (*obj == nullptr)
      return std::shared_ptr<const json::object>();
    // A copy on the default heap: the informer parses each event into an arena that is gone once
    // the projection returns.
    return std::make_shared<const json::object>(**obj, json::storage_ptr());
  };
  auto threshold = take("resourceUsedThresholdWithBE");
  if (!threshold)
    return threshold.error();
  info.resource_used_threshold_with_be = std::move(*threshold);
  auto qos = take("resourceQOSStrategy");
  if (!qos)
    return qos.error();
  info.resource_qos_strategy = std::move(*qos);
  auto burst = take("cpuBurstStrategy");
  if (!burst)
    return burst.error();
  info.cpu_burst_strategy = std::move(*burst);
  auto system = take("systemStrategy");
  if (!system)
    return system.error();
  info.system_strategy = std::move(*system);
  // A bad host application costs only itself, not the thresholds above.
  info.host_applications =
      decodeHostApplications(*spec == nullptr ? nullptr : jf::field(**spec, "hostApplications"));
  return info;
}

}  // namespace koord::roles::koordlet
