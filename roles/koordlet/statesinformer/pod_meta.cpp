#include "statesinformer/pod_meta.h"

#include <boost/json.hpp>

#include <fmt/format.h>

#include "koord/cgroup/kubepods_path.h"
#include "koord/kube/decode.h"
#include "koord/kube/json_fields.h"
#include "koord/kube/list_decoder.h"
#include "koord/kube/object_meta.h"
#include "koord/kube/pod_phase.h"
#include "koord/kube/time.h"

namespace koord::roles::koordlet {

namespace json = boost::json;
namespace jf = kube::jsonfields;

bool PodMeta::isBE() const {
  if (qos == apis::QoSClass::kBE)
    return true;
  return qos == apis::QoSClass::kNone && kube_qos == apis::KubeQoS::kBestEffort;
}

namespace {

kube::Expected<std::vector<ContainerMeta>> decodeContainers(const json::object& spec,
                                                            std::string_view name,
                                                            std::string_view path) {
  std::vector<ContainerMeta> out;
  const json::value* list = jf::field(spec, name);
  if (list == nullptr || list->is_null())
    return out;
  if (!list->is_array())
    return jf::typeError(path, "array", *list);
  for (std::size_t i = 0; i < list->as_array().size(); ++i) {
    const auto& c = list->as_array()[i];
    auto cpath = jf::indexPath(path, i);
    if (!c.is_object())
      return jf::typeError(cpath, "object", c);
    ContainerMeta m;
    auto n = jf::stringField(c.as_object(), "name", cpath);
    if (!n)
      return n.error();
    m.name = std::move(*n);
    if (const auto* res = jf::field(c.as_object(), "resources"); res && res->is_object()) {
      auto rpath = jf::childPath(cpath, "resources");
      if (const auto* req = jf::field(res->as_object(), "requests")) {
        auto r = kube::decodeResourceList(*req, jf::childPath(rpath, "requests"));
        if (!r)
          return r.error();
        m.requests = std::move(*r);
      }
      if (const auto* lim = jf::field(res->as_object(), "limits")) {
        auto r = kube::decodeResourceList(*lim, jf::childPath(rpath, "limits"));
        if (!r)
          return r.error();
        m.limits = std::move(*r);
      }
    }
    out.push_back(std::move(m));
  }
  return out;
}

// Koordinator's GetPodRequest over cpu and memory. A sum that overflows a Quantity keeps its
// last value: no real pod comes near, and the pod must not fail to decode over it.
kube::ResourceList podRequests(const std::vector<ContainerMeta>& containers,
                               const std::vector<ContainerMeta>& inits,
                               const kube::ResourceList& overhead) {
  kube::ResourceList out;
  for (std::string_view name : {std::string_view("cpu"), std::string_view("memory")}) {
    std::optional<kube::Quantity> total;
    auto add = [&](const kube::ResourceList& list) {
      auto it = list.find(name);
      if (it == list.end())
        return;
      if (!total)
        total = it->second;
      else
        (void)total->add(it->second);
    };
    for (const auto& c : containers)
      add(c.requests);
    for (const auto& c : inits) {
      auto it = c.requests.find(name);
      if (it != c.requests.end() && (!total || it->second > *total))
        total = it->second;
    }
    add(overhead);
    if (total)
      out.emplace(std::string(name), *total);
  }
  return out;
}

}  // namespace

kube::Expected<PodMeta> decodePodMeta(const json::value& v) {
  if (!v.is_object())
    return jf::typeError("pod", "object", v);
  const auto& o = v.as_object();
  PodMeta p;
  auto meta = jf::objectField(o, "metadata", "");
  if (!meta)
    return meta.error();
  if (*meta == nullptr)
    return kube::makeKubeError("metadata: missing");
  // deletionTimestamp only for its presence: a pod being deleted is terminating whatever the
  // time says.
  using Fields = kube::ObjectMetaFields;
  kube::ObjectMeta m;
  if (auto read = kube::decodeObjectMeta(
          o, {.members = Fields::kNamespace | Fields::kName | Fields::kUid | Fields::kLabels}, m);
      !read)
    return read.error();
  p.namespace_ = std::move(m.namespace_);
  p.name = std::move(m.name);
  p.uid = std::move(m.uid);
  p.labels = std::move(m.labels);
  if (p.name.empty() || p.uid.empty())
    return kube::makeKubeError("metadata.name and metadata.uid: required");
  if (const auto* del = jf::field(**meta, "deletionTimestamp"); del && !del->is_null())
    p.terminating = true;
  // Read leniently: only the cold start of the peak prediction depends on it.
  if (const auto* created = jf::field(**meta, "creationTimestamp");
      created != nullptr && created->is_string())
    p.creation_time = kube::parseTime(created->as_string());
  // Only the annotations some koordlet module reads are kept (kKeptPodAnnotations). Values are
  // strings to the API server; anything else, or a value past the bound, is as if absent.
  if (const auto* annotations = jf::field(**meta, "annotations");
      annotations != nullptr && annotations->is_object()) {
    for (std::string_view key : kKeptPodAnnotations) {
      if (const auto* value = annotations->as_object().if_contains(key);
          value != nullptr && value->is_string() &&
          value->as_string().size() <= kMaxKeptAnnotationBytes)
        p.annotations.emplace(key, std::string_view(value->as_string()));
    }
  }

  auto spec = jf::objectField(o, "spec", "");
  if (!spec)
    return spec.error();
  std::vector<apis::ContainerResources> for_qos;
  if (*spec != nullptr) {
    auto containers = decodeContainers(**spec, "containers", "spec.containers");
    if (!containers)
      return containers.error();
    p.containers = std::move(*containers);
    auto inits = decodeContainers(**spec, "initContainers", "spec.initContainers");
    if (!inits)
      return inits.error();
    for (const auto& c : p.containers)
      for_qos.push_back({c.requests, c.limits});
    for (const auto& c : *inits)
      for_qos.push_back({c.requests, c.limits});
    kube::ResourceList overhead;
    if (const auto* o = jf::field(**spec, "overhead"); o != nullptr && !o->is_null()) {
      auto decoded = kube::decodeResourceList(*o, "spec.overhead");
      if (!decoded)
        return decoded.error();
      overhead = std::move(*decoded);
    }
    p.pod_requests = podRequests(p.containers, *inits, overhead);
    if (const auto* prio = jf::field(**spec, "priority"); prio && !prio->is_null()) {
      if (!prio->is_int64() || prio->as_int64() < INT32_MIN || prio->as_int64() > INT32_MAX)
        return jf::typeError("spec.priority", "int32", *prio);
      p.priority_value = static_cast<std::int32_t>(prio->as_int64());
    }
  }

  std::string status_qos;
  auto status = jf::objectField(o, "status", "");
  if (!status)
    return status.error();
  if (*status != nullptr) {
    auto phase = jf::stringField(**status, "phase", "status");
    if (!phase)
      return phase.error();
    // A phase Kubernetes does not define (or none) reads as Unknown rather than failing the pod.
    p.phase = kube::podPhaseNamed<PodPhase>(*phase).value_or(PodPhase::kUnknown);
    auto q = jf::stringField(**status, "qosClass", "status");
    if (!q)
      return q.error();
    status_qos = std::move(*q);
    if (const auto* cs = jf::field(**status, "containerStatuses"); cs && cs->is_array()) {
      for (const auto& s : cs->as_array()) {
        if (!s.is_object())
          continue;
        auto cname = jf::stringField(s.as_object(), "name", "status.containerStatuses");
        auto cid = jf::stringField(s.as_object(), "containerID", "status.containerStatuses");
        if (!cname || !cid || cid->empty())
          continue;
        for (auto& c : p.containers) {
          if (c.name != *cname)
            continue;
          auto ref = cgroup::parseContainerStatusId(*cid);
          if (ref) {
            c.runtime = std::move(ref->runtime);
            c.id = std::move(ref->id);
          } else {
            c.id_error = ref.error().message;
          }
        }
      }
    }
  }
  p.kube_qos = apis::kubeQoSFromStatus(status_qos, for_qos);
  p.qos = apis::podQoSClassWithDefault(p.labels, p.kube_qos);
  p.priority = apis::podPriorityClassWithDefault(p.labels, p.priority_value, p.kube_qos);
  return p;
}

kube::Expected<PodListResult> decodePodList(const json::value& v) {
  if (!v.is_object())
    return jf::typeError("PodList", "object", v);
  const auto* items = jf::field(v.as_object(), "items");
  PodListResult out;
  if (items == nullptr || items->is_null())
    return out;
  if (!items->is_array())
    return jf::typeError("items", "array", *items);
  for (std::size_t i = 0; i < items->as_array().size(); ++i)
    addPodListItem(out, i, items->as_array()[i]);
  return out;
}

void addPodListItem(PodListResult& out, std::size_t index, const json::value& item) {
  auto pod = decodePodMeta(item);
  if (pod)
    out.pods.push_back(std::move(*pod));
  else
    out.errors.push_back(fmt::format("items[{}]: {}", index, pod.error().message));
}

kube::Expected<PodListResult> decodePodListText(std::string_view body) {
  PodListResult out;
  kube::ListDecoder decoder([&](const json::value& item) {
    addPodListItem(out, out.pods.size() + out.errors.size(), item);
    return true;
  });
  std::string error;
  if (!decoder.feed(body, error) || !decoder.finish(error))
    return kube::makeKubeError("PodList: " + error);
  return out;
}

}  // namespace koord::roles::koordlet
