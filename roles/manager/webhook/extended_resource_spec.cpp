#include "webhook/extended_resource_spec.h"

#include <boost/json.hpp>

#include <map>

#include <fmt/format.h>

#include "koord/apis/extended_resource_spec.h"
#include "koord/apis/extension.h"
#include "koord/kube/decode.h"
#include "webhook/pod_fields.h"

namespace koord::manager::webhook {
namespace {

namespace json = boost::json;

using ContainerSpec = apis::ExtendedContainerSpec;
using Spec = apis::ExtendedResourceSpec;

kube::ResourceList batchOnly(const kube::ResourceList& list) {
  kube::ResourceList out;
  for (std::string_view name : {apis::kBatchCPU, apis::kBatchMemory}) {
    if (auto it = list.find(name); it != list.end())
      out.emplace(it->first, it->second);
  }
  return out;
}

kube::Expected<kube::ResourceList> listAt(const json::object& o, std::string_view name,
                                          std::string_view path) {
  const json::value* v = o.if_contains(name);
  if (v == nullptr || v->is_null())
    return kube::ResourceList();
  return kube::decodeResourceList(*v, fmt::format("{}.{}", path, name));
}

// Only spec.containers count: Koordinator leaves init containers and overhead out.
kube::Expected<Spec> specOfPod(const json::object& pod) {
  Spec spec;
  const json::value* pod_spec = pod.if_contains("spec");
  if (pod_spec == nullptr || !pod_spec->is_object())
    return spec;
  const json::value* containers = pod_spec->get_object().if_contains("containers");
  if (containers == nullptr || containers->is_null())
    return spec;
  if (!containers->is_array())
    return kube::makeKubeError("spec.containers: expected array");
  const json::array& items = containers->get_array();
  for (std::size_t i = 0; i < items.size(); ++i) {
    std::string path = fmt::format("spec.containers[{}]", i);
    const json::object* c = items[i].if_object();
    if (c == nullptr)
      return kube::makeKubeError(path + ": expected object");
    const json::value* name = c->if_contains("name");
    if (name == nullptr || !name->is_string())
      return kube::makeKubeError(path + ".name: expected string");
    const json::value* resources = c->if_contains("resources");
    if (resources == nullptr || resources->is_null())
      continue;
    if (!resources->is_object())
      return kube::makeKubeError(path + ".resources: expected object");
    auto requests = listAt(resources->get_object(), "requests", path + ".resources");
    if (!requests)
      return requests.error();
    auto limits = listAt(resources->get_object(), "limits", path + ".resources");
    if (!limits)
      return limits.error();
    ContainerSpec cs{batchOnly(*requests), batchOnly(*limits)};
    if (!cs.requests.empty() || !cs.limits.empty())
      spec[std::string(name->get_string())] = std::move(cs);
  }
  return spec;
}

json::object encodeList(const kube::ResourceList& list) {
  json::object o;
  for (const auto& [name, q] : list)
    o[name] = q.toString();
  return o;
}

std::string encode(const Spec& spec) {
  json::object root;
  if (!spec.empty()) {
    json::object containers;
    for (const auto& [name, cs] : spec) {
      // Go's field order: limits, then requests; empty maps are omitted.
      json::object entry;
      if (!cs.limits.empty())
        entry["limits"] = encodeList(cs.limits);
      if (!cs.requests.empty())
        entry["requests"] = encodeList(cs.requests);
      containers[name] = std::move(entry);
    }
    root["containers"] = std::move(containers);
  }
  return json::serialize(root);
}

}  // namespace

kube::Expected<std::string> extendedResourceSpecFor(const boost::json::object& pod) {
  auto spec = specOfPod(pod);
  if (!spec)
    return spec.error();
  return encode(*spec);
}

kube::Expected<void> updateExtendedResourceSpec(boost::json::object& pod) {
  auto wanted = specOfPod(pod);
  if (!wanted)
    return wanted.error();
  auto annotations = podStringMap(pod, "annotations");
  if (!annotations)
    return annotations.error();
  Spec current;
  if (auto it = annotations->find(apis::kAnnotationExtendedResourceSpec);
      it != annotations->end()) {
    auto parsed = apis::parseExtendedResourceSpec(it->second);
    if (!parsed) {
      return kube::makeKubeError(fmt::format(
          "failed to get current extended resource spec, err: metadata.annotations[{}]: "
          "{}",
          apis::kAnnotationExtendedResourceSpec, parsed.error().message));
    }
    current = std::move(*parsed);
  }
  if (current == *wanted)
    return {};
  json::value& meta = pod["metadata"];
  if (!meta.is_object())
    meta = json::object();
  json::value& annots = meta.get_object()["annotations"];
  if (!annots.is_object())
    annots = json::object();
  annots.get_object()[apis::kAnnotationExtendedResourceSpec] = encode(*wanted);
  return {};
}

}  // namespace koord::manager::webhook
