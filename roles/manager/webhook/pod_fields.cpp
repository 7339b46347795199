#include "webhook/pod_fields.h"

#include <boost/json.hpp>

#include <limits>

#include <fmt/format.h>

#include "koord/kube/decode.h"

namespace koord::manager::webhook {
namespace {

namespace json = boost::json;

const json::value* field(const json::object& o, std::string_view name) {
  const json::value* v = o.if_contains(name);
  return (v == nullptr || v->is_null()) ? nullptr : v;
}

kube::Error typeError(std::string_view path, std::string_view want) {
  return kube::makeKubeError(fmt::format("{}: expected {}", path, want));
}

// A sub-object that may be absent (nullptr); present but not an object is an error.
kube::Expected<const json::object*> optionalObject(const json::object& o, std::string_view name,
                                                   std::string_view path) {
  const json::value* v = field(o, name);
  if (v == nullptr)
    return static_cast<const json::object*>(nullptr);
  if (!v->is_object())
    return typeError(path, "object");
  return &v->get_object();
}

kube::Expected<kube::ResourceList> resourceList(const json::object* resources,
                                                std::string_view name, std::string_view path) {
  if (resources == nullptr)
    return kube::ResourceList();
  const json::value* v = field(*resources, name);
  if (v == nullptr)
    return kube::ResourceList();
  return kube::decodeResourceList(*v, path);
}

kube::Expected<void> addList(kube::ResourceList& dst, const kube::ResourceList& src,
                             std::string_view what) {
  for (const auto& [name, q] : src) {
    if (!dst[name].add(q))
      return kube::makeKubeError(fmt::format("{}: {} overflows", what, name));
  }
  return {};
}

void maxList(kube::ResourceList& dst, const kube::ResourceList& src) {
  for (const auto& [name, q] : src) {
    auto it = dst.find(name);
    if (it == dst.end())
      dst.emplace(name, q);
    else if (q > it->second)
      it->second = q;
  }
}

kube::Expected<void> appendContainers(const json::object& spec, std::string_view list, bool init,
                                      std::vector<PodContainer>& out) {
  const json::value* v = field(spec, list);
  if (v == nullptr)
    return {};
  if (!v->is_array())
    return typeError(fmt::format("spec.{}", list), "array");
  const json::array& items = v->get_array();
  for (std::size_t i = 0; i < items.size(); ++i) {
    std::string path = fmt::format("spec.{}[{}]", list, i);
    const json::object* c = items[i].if_object();
    if (c == nullptr)
      return typeError(path, "object");
    PodContainer pc;
    pc.init = init;
    if (init) {
      if (const json::value* rp = field(*c, "restartPolicy")) {
        if (!rp->is_string())
          return typeError(path + ".restartPolicy", "string");
        pc.sidecar = rp->get_string() == "Always";
      }
    }
    auto resources = optionalObject(*c, "resources", path + ".resources");
    if (!resources)
      return resources.error();
    auto requests = resourceList(*resources, "requests", path + ".resources.requests");
    if (!requests)
      return requests.error();
    auto limits = resourceList(*resources, "limits", path + ".resources.limits");
    if (!limits)
      return limits.error();
    pc.resources.requests = std::move(*requests);
    pc.resources.limits = std::move(*limits);
    out.push_back(std::move(pc));
  }
  return {};
}

kube::Expected<const json::object*> podSpec(const json::object& pod) {
  return optionalObject(pod, "spec", "spec");
}

}  // namespace

kube::Expected<kube::Labels> podStringMap(const json::object& pod, std::string_view which) {
  auto meta = optionalObject(pod, "metadata", "metadata");
  if (!meta)
    return meta.error();
  if (*meta == nullptr)
    return kube::Labels();
  const json::value* v = field(**meta, which);
  if (v == nullptr)
    return kube::Labels();
  return kube::decodeStringMap(*v, fmt::format("metadata.{}", which));
}

kube::Expected<std::string> podNamespace(const json::object& pod) {
  auto meta = optionalObject(pod, "metadata", "metadata");
  if (!meta)
    return meta.error();
  if (*meta == nullptr)
    return std::string();
  const json::value* v = field(**meta, "namespace");
  if (v == nullptr)
    return std::string();
  if (!v->is_string())
    return typeError("metadata.namespace", "string");
  return std::string(v->get_string());
}

kube::Expected<std::optional<std::int32_t>> podPriority(const json::object& pod) {
  auto spec = podSpec(pod);
  if (!spec)
    return spec.error();
  if (*spec == nullptr)
    return std::optional<std::int32_t>();
  const json::value* v = field(**spec, "priority");
  if (v == nullptr)
    return std::optional<std::int32_t>();
  constexpr std::int64_t kMin = std::numeric_limits<std::int32_t>::min();
  constexpr std::int64_t kMax = std::numeric_limits<std::int32_t>::max();
  if (v->is_int64() && v->get_int64() >= kMin && v->get_int64() <= kMax)
    return std::optional<std::int32_t>(static_cast<std::int32_t>(v->get_int64()));
  if (v->is_uint64() && v->get_uint64() <= static_cast<std::uint64_t>(kMax))
    return std::optional<std::int32_t>(static_cast<std::int32_t>(v->get_uint64()));
  return typeError("spec.priority", "int32");
}

kube::Expected<std::vector<PodContainer>> podContainers(const json::object& pod) {
  std::vector<PodContainer> out;
  auto spec = podSpec(pod);
  if (!spec)
    return spec.error();
  if (*spec == nullptr)
    return out;
  if (auto r = appendContainers(**spec, "initContainers", true, out); !r)
    return r.error();
  if (auto r = appendContainers(**spec, "containers", false, out); !r)
    return r.error();
  return out;
}

kube::Expected<apis::KubeQoS> podKubeQoS(const json::object& pod) {
  auto containers = podContainers(pod);
  if (!containers)
    return containers.error();
  std::vector<apis::ContainerResources> resources;
  resources.reserve(containers->size());
  for (auto& c : *containers)
    resources.push_back(std::move(c.resources));
  std::string_view status_qos;
  if (const json::value* status = field(pod, "status"); status != nullptr && status->is_object()) {
    const json::value* q = field(status->get_object(), "qosClass");
    if (q != nullptr && q->is_string())
      status_qos = q->get_string();
  }
  return apis::kubeQoSFromStatus(status_qos, resources);
}

kube::Expected<kube::ResourceList> podRequests(const json::object& pod) {
  auto containers = podContainers(pod);
  if (!containers)
    return containers.error();
  kube::ResourceList requests;
  kube::ResourceList sidecars;
  kube::ResourceList init_max;
  for (const auto& c : *containers) {
    const kube::ResourceList& own = c.resources.requests;
    if (!c.init) {
      if (auto r = addList(requests, own, "pod requests"); !r)
        return r.error();
    } else if (c.sidecar) {
      if (auto r = addList(requests, own, "pod requests"); !r)
        return r.error();
      if (auto r = addList(sidecars, own, "pod requests"); !r)
        return r.error();
      maxList(init_max, sidecars);
    } else {
      // An init container runs beside the sidecars started before it.
      kube::ResourceList running = own;
      if (auto r = addList(running, sidecars, "pod requests"); !r)
        return r.error();
      maxList(init_max, running);
    }
  }
  maxList(requests, init_max);
  auto spec = podSpec(pod);
  if (!spec)
    return spec.error();
  if (*spec != nullptr) {
    if (const json::value* overhead = field(**spec, "overhead")) {
      auto list = kube::decodeResourceList(*overhead, "spec.overhead");
      if (!list)
        return list.error();
      if (auto r = addList(requests, *list, "pod requests"); !r)
        return r.error();
    }
  }
  return requests;
}

}  // namespace koord::manager::webhook
