#include "framework/object_decode.h"

#include <boost/json.hpp>

#include <fmt/format.h>

#include <algorithm>

#include "koord/core/saturating.h"
#include "koord/kube/decode.h"
#include "koord/kube/json_fields.h"
#include "koord/kube/object_meta.h"
#include "koord/kube/pod_phase.h"

namespace koord::roles::descheduler {

namespace {

namespace json = boost::json;
namespace jf = kube::jsonfields;

// Annotations the plugins read; a pod's others (last-applied-configuration) are not copied.
constexpr std::string_view kMirrorAnnotation = "kubernetes.io/config.mirror";
constexpr std::string_view kConfigSourceAnnotation = "kubernetes.io/config.source";
constexpr std::string_view kKeptAnnotations[] = {
    kMirrorAnnotation, kConfigSourceAnnotation, "descheduler.alpha.kubernetes.io/evict",
    "scheduling.koordinator.sh/eviction-cost", "descheduler.koordinator.sh/evict"};

Expected<const json::object*> root(const json::value& v) {
  if (!v.is_object())
    return jf::typeError("", "object", v);
  return &v.get_object();
}

// A metav1.LabelSelector at `path`, compiled as the API server would (a bad operator or value
// is refused here rather than matching nothing later).
Expected<kube::Selector> compiledSelector(const json::value& v, const std::string& path) {
  auto decoded = kube::decodeLabelSelector(v, path);
  if (!decoded)
    return decoded.error();
  auto compiled = kube::toSelector(*decoded);
  if (!compiled)
    return invalidArgument(fmt::format("{}: {}", path, compiled.error().message));
  return std::move(*compiled);
}

Expected<std::vector<OwnerRef>> ownerRefs(const json::object& o) {
  std::vector<OwnerRef> out;
  auto meta = jf::objectField(o, "metadata", "");
  if (!meta)
    return meta.error();
  if (*meta == nullptr)
    return out;
  auto refs = jf::objectList(**meta, "ownerReferences", "metadata");
  if (!refs)
    return refs.error();
  for (std::size_t i = 0; i < refs->size(); ++i) {
    const json::object& r = *(*refs)[i];
    const std::string path = jf::indexPath("metadata.ownerReferences", i);
    OwnerRef ref;
    for (auto [name, field] :
         {std::pair{"apiVersion", &ref.api_version}, std::pair{"kind", &ref.kind},
          std::pair{"name", &ref.name}, std::pair{"uid", &ref.uid}}) {
      auto s = jf::stringField(r, name, path);
      if (!s)
        return s.error();
      *field = std::move(*s);
    }
    auto controller = jf::boolField(r, "controller", path);
    if (!controller)
      return controller.error();
    ref.controller = *controller;
    out.push_back(std::move(ref));
  }
  return out;
}

// A resources.requests map into base units, added to (or raised to) `into`.
Expected<ResourceAmounts> requestsOf(const json::object& container, std::string_view path) {
  auto resources = jf::objectField(container, "resources", path);
  if (!resources)
    return resources.error();
  if (*resources == nullptr)
    return ResourceAmounts{};
  const json::value* requests = jf::field(**resources, "requests");
  if (requests == nullptr)
    return ResourceAmounts{};
  auto list = kube::decodeResourceList(*requests, jf::childPath(path, "resources.requests"));
  if (!list)
    return list.error();
  return amountsOf(*list);
}

Expected<PodAffinityTerm> affinityTerm(const json::object& t, std::string_view path) {
  PodAffinityTerm out;
  if (const json::value* s = jf::field(t, "labelSelector")) {
    auto selector = compiledSelector(*s, jf::childPath(path, "labelSelector"));
    if (!selector)
      return selector.error();
    out.selector = std::move(*selector);
    out.has_selector = true;
  }
  auto namespaces = jf::stringList(t, "namespaces", path);
  if (!namespaces)
    return namespaces.error();
  out.namespaces = std::move(*namespaces);
  auto key = jf::stringField(t, "topologyKey", path);
  if (!key)
    return key.error();
  out.topology_key = std::move(*key);
  return out;
}

Expected<void> podAffinity(const json::object& spec, Pod& pod) {
  auto affinity = jf::objectField(spec, "affinity", "spec");
  if (!affinity)
    return affinity.error();
  if (*affinity == nullptr)
    return {};
  if (const json::value* na = jf::field(**affinity, "nodeAffinity")) {
    auto decoded = kube::decodeNodeAffinity(*na, "spec.affinity.nodeAffinity");
    if (!decoded)
      return decoded.error();
    pod.node_affinity = std::move(*decoded);
  }
  for (auto [name, required, preferred] :
       {std::tuple{"podAffinity", &pod.required_affinity,
                   static_cast<std::vector<WeightedPodAffinityTerm>*>(nullptr)},
        std::tuple{"podAntiAffinity", &pod.required_anti_affinity, &pod.preferred_anti_affinity}}) {
    const std::string path = jf::childPath("spec.affinity", name);
    auto section = jf::objectField(**affinity, name, "spec.affinity");
    if (!section)
      return section.error();
    if (*section == nullptr)
      continue;
    auto terms = jf::objectList(**section, "requiredDuringSchedulingIgnoredDuringExecution", path);
    if (!terms)
      return terms.error();
    for (std::size_t i = 0; i < terms->size(); ++i) {
      auto t = affinityTerm(
          *(*terms)[i],
          jf::indexPath(jf::childPath(path, "requiredDuringSchedulingIgnoredDuringExecution"), i));
      if (!t)
        return t.error();
      required->push_back(std::move(*t));
    }
    if (preferred == nullptr)
      continue;
    auto weighted =
        jf::objectList(**section, "preferredDuringSchedulingIgnoredDuringExecution", path);
    if (!weighted)
      return weighted.error();
    for (std::size_t i = 0; i < weighted->size(); ++i) {
      const std::string item =
          jf::indexPath(jf::childPath(path, "preferredDuringSchedulingIgnoredDuringExecution"), i);
      WeightedPodAffinityTerm w;
      auto weight = jf::int64Field(*(*weighted)[i], "weight", item);
      if (!weight)
        return weight.error();
      w.weight = static_cast<std::int32_t>(std::clamp<std::int64_t>(*weight, 0, 100));
      auto term = jf::objectField(*(*weighted)[i], "podAffinityTerm", item);
      if (!term)
        return term.error();
      if (*term != nullptr) {
        auto t = affinityTerm(**term, jf::childPath(item, "podAffinityTerm"));
        if (!t)
          return t.error();
        w.term = std::move(*t);
      }
      preferred->push_back(std::move(w));
    }
  }
  return {};
}

Expected<void> topologySpread(const json::object& spec, Pod& pod) {
  auto list = jf::objectList(spec, "topologySpreadConstraints", "spec");
  if (!list)
    return list.error();
  for (std::size_t i = 0; i < list->size(); ++i) {
    const json::object& c = *(*list)[i];
    const std::string path = jf::indexPath("spec.topologySpreadConstraints", i);
    TopologySpreadConstraint out;
    auto skew = jf::int64Field(c, "maxSkew", path);
    if (!skew)
      return skew.error();
    if (*skew < 1 || *skew > std::numeric_limits<std::int32_t>::max())
      return invalidArgument(fmt::format("{}.maxSkew: must be at least 1, got {}", path, *skew));
    out.max_skew = static_cast<std::int32_t>(*skew);
    auto key = jf::stringField(c, "topologyKey", path);
    if (!key)
      return key.error();
    out.topology_key = std::move(*key);
    auto when = jf::stringField(c, "whenUnsatisfiable", path);
    if (!when)
      return when.error();
    if (*when == "ScheduleAnyway")
      out.when_unsatisfiable = UnsatisfiableConstraintAction::kScheduleAnyway;
    else if (*when == "DoNotSchedule" || when->empty())
      out.when_unsatisfiable = UnsatisfiableConstraintAction::kDoNotSchedule;
    else
      return invalidArgument(fmt::format(
          "{}.whenUnsatisfiable: unsupported value {:?}: supported values: \"DoNotSchedule\", "
          "\"ScheduleAnyway\"",
          path, *when));
    if (const json::value* s = jf::field(c, "labelSelector")) {
      auto selector = compiledSelector(*s, jf::childPath(path, "labelSelector"));
      if (!selector)
        return selector.error();
      out.selector = std::move(*selector);
      out.has_selector = true;
    }
    pod.topology_spread.push_back(std::move(out));
  }
  return {};
}

Expected<void> containers(const json::object& spec, Pod& pod) {
  ResourceAmounts regular;
  ResourceAmounts init_max;
  std::size_t count = 0;
  for (const bool init : {false, true}) {
    const char* name = init ? "initContainers" : "containers";
    auto list = jf::objectList(spec, name, "spec");
    if (!list)
      return list.error();
    count += list->size();
    if (count > kMaxContainersPerPod)
      return invalidArgument(
          fmt::format("spec.{}: more than {} containers", name, kMaxContainersPerPod));
    for (std::size_t i = 0; i < list->size(); ++i) {
      const std::string path = jf::indexPath(jf::childPath("spec", name), i);
      auto requests = requestsOf(*(*list)[i], path);
      if (!requests)
        return requests.error();
      for (const auto& [r, value] : *requests) {
        if (init)
          init_max[r] = std::max(init_max[r], value);
        else
          regular[r] = saturatingAdd(regular[r], value);
      }
      if (!init) {
        auto image = jf::stringField(*(*list)[i], "image", path);
        if (!image)
          return image.error();
        pod.container_images.push_back(std::move(*image));
      }
    }
  }
  pod.requests = std::move(regular);
  for (const auto& [r, value] : init_max)
    pod.requests[r] = std::max(pod.requests[r], value);
  if (const json::value* overhead = jf::field(spec, "overhead")) {
    auto list = kube::decodeResourceList(*overhead, "spec.overhead");
    if (!list)
      return list.error();
    for (const auto& [r, value] : amountsOf(*list))
      pod.requests[r] = saturatingAdd(pod.requests[r], value);
  }
  return {};
}

Expected<void> volumes(const json::object& spec, Pod& pod) {
  auto list = jf::objectList(spec, "volumes", "spec");
  if (!list)
    return list.error();
  for (const json::object* v : *list) {
    if (jf::field(*v, "emptyDir") != nullptr || jf::field(*v, "hostPath") != nullptr)
      pod.has_local_storage = true;
    if (jf::field(*v, "persistentVolumeClaim") != nullptr)
      pod.has_pvc = true;
  }
  return {};
}

// status.qosClass, which the API server sets on every pod it stores; a pod without a known one
// gets the class its containers' requests and limits give, as GetPodQOS does.
Expected<apis::KubeQoS> kubeQoS(const json::object* spec, std::string_view status_qos_class) {
  std::vector<apis::ContainerResources> containers;
  const bool stated = status_qos_class == "Guaranteed" || status_qos_class == "Burstable" ||
                      status_qos_class == "BestEffort";
  if (stated || spec == nullptr)
    return apis::kubeQoSFromStatus(status_qos_class, containers);
  for (const char* name : {"containers", "initContainers"}) {
    auto list = jf::objectList(*spec, name, "spec");
    if (!list)
      return list.error();
    for (std::size_t i = 0; i < list->size(); ++i) {
      const std::string path = jf::indexPath(jf::childPath("spec", name), i);
      auto resources = jf::objectField(*(*list)[i], "resources", path);
      if (!resources)
        return resources.error();
      apis::ContainerResources c;
      for (auto [field, target] :
           {std::pair{"requests", &c.requests}, std::pair{"limits", &c.limits}}) {
        const json::value* v = *resources != nullptr ? jf::field(**resources, field) : nullptr;
        if (v == nullptr)
          continue;
        auto decoded =
            kube::decodeResourceList(*v, jf::childPath(jf::childPath(path, "resources"), field));
        if (!decoded)
          return decoded.error();
        *target = std::move(*decoded);
      }
      containers.push_back(std::move(c));
    }
  }
  return apis::kubeQoSFromStatus(status_qos_class, containers);
}

// status.qosClass goes to `qos_class` for kubeQoS.
Expected<void> status(const json::object& o, Pod& pod, std::string& qos_class) {
  auto st = jf::objectField(o, "status", "");
  if (!st)
    return st.error();
  if (*st == nullptr)
    return {};
  auto phase = jf::stringField(**st, "phase", "status");
  if (!phase)
    return phase.error();
  auto p = kube::decodePodPhase<PodPhase>(*phase);
  if (!p)
    return p.error();
  pod.phase = *p;
  auto reason = jf::stringField(**st, "reason", "status");
  if (!reason)
    return reason.error();
  pod.reason = std::move(*reason);
  auto start = jf::timeField(**st, "startTime", "status");
  if (!start)
    return start.error();
  pod.start_time = *start;
  auto qos = jf::stringField(**st, "qosClass", "status");
  if (!qos)
    return qos.error();
  qos_class = std::move(*qos);
  for (const bool init : {false, true}) {
    const char* name = init ? "initContainerStatuses" : "containerStatuses";
    auto list = jf::objectList(**st, name, "status");
    if (!list)
      return list.error();
    if (list->size() > kMaxContainersPerPod)
      return invalidArgument(
          fmt::format("status.{}: more than {} entries", name, kMaxContainersPerPod));
    for (std::size_t i = 0; i < list->size(); ++i) {
      const json::object& c = *(*list)[i];
      const std::string path = jf::indexPath(jf::childPath("status", name), i);
      ContainerStatus cs;
      cs.init = init;
      auto n = jf::stringField(c, "name", path);
      if (!n)
        return n.error();
      cs.name = std::move(*n);
      auto restarts = jf::int64Field(c, "restartCount", path);
      if (!restarts)
        return restarts.error();
      cs.restart_count =
          static_cast<std::int32_t>(std::clamp<std::int64_t>(*restarts, 0, 1'000'000'000));
      auto state = jf::objectField(c, "state", path);
      if (!state)
        return state.error();
      if (*state != nullptr) {
        for (auto [which, field] : {std::pair{"waiting", &cs.waiting_reason},
                                    std::pair{"terminated", &cs.terminated_reason}}) {
          auto s = jf::objectField(**state, which, jf::childPath(path, "state"));
          if (!s)
            return s.error();
          if (*s == nullptr)
            continue;
          auto r = jf::stringField(**s, "reason", jf::childPath(path, "state"));
          if (!r)
            return r.error();
          *field = std::move(*r);
        }
      }
      pod.container_statuses.push_back(std::move(cs));
    }
  }
  return {};
}

}  // namespace

Expected<Pod> decodePod(const json::value& v) {
  auto o = root(v);
  if (!o)
    return o.error();
  kube::ObjectMeta meta;
  kube::ObjectMetaFields read;
  read.members = kube::ObjectMetaFields::kNamespace | kube::ObjectMetaFields::kName |
                 kube::ObjectMetaFields::kUid | kube::ObjectMetaFields::kResourceVersion |
                 kube::ObjectMetaFields::kLabels | kube::ObjectMetaFields::kAnnotations |
                 kube::ObjectMetaFields::kCreationTimestamp |
                 kube::ObjectMetaFields::kDeletionTimestamp;
  read.kept_annotations = kKeptAnnotations;
  if (auto r = kube::decodeObjectMeta(**o, read, meta); !r)
    return r.error();
  Pod pod;
  pod.namespace_ = std::move(meta.namespace_);
  pod.name = std::move(meta.name);
  pod.uid = std::move(meta.uid);
  pod.resource_version = std::move(meta.resource_version);
  pod.labels = std::move(meta.labels);
  pod.annotations = std::move(meta.annotations);
  pod.creation_timestamp = meta.creation_timestamp;
  pod.deletion_timestamp = meta.deletion_timestamp;
  auto refs = ownerRefs(**o);
  if (!refs)
    return refs.error();
  pod.owner_refs = std::move(*refs);
  pod.mirror = pod.annotations.contains(kMirrorAnnotation);
  if (auto it = pod.annotations.find(kConfigSourceAnnotation); it != pod.annotations.end())
    pod.static_pod = it->second != "api";

  auto spec = jf::objectField(**o, "spec", "");
  if (!spec)
    return spec.error();
  if (*spec != nullptr) {
    const json::object& s = **spec;
    for (auto [name, field] :
         {std::pair{"nodeName", &pod.node_name}, std::pair{"schedulerName", &pod.scheduler_name},
          std::pair{"priorityClassName", &pod.priority_class_name}}) {
      auto str = jf::stringField(s, name, "spec");
      if (!str)
        return str.error();
      *field = std::move(*str);
    }
    if (const json::value* p = jf::field(s, "priority")) {
      auto prio = jf::int32Value(*p, "spec.priority");
      if (!prio)
        return prio.error();
      pod.priority = *prio;
    }
    if (const json::value* ns = jf::field(s, "nodeSelector")) {
      auto sel = kube::decodeStringMap(*ns, "spec.nodeSelector");
      if (!sel)
        return sel.error();
      pod.node_selector = std::move(*sel);
    }
    if (const json::value* t = jf::field(s, "tolerations")) {
      auto tol = kube::decodeTolerations(*t, "spec.tolerations");
      if (!tol)
        return tol.error();
      pod.tolerations = std::move(*tol);
    }
    if (auto r = podAffinity(s, pod); !r)
      return r.error();
    if (auto r = topologySpread(s, pod); !r)
      return r.error();
    if (auto r = containers(s, pod); !r)
      return r.error();
    if (auto r = volumes(s, pod); !r)
      return r.error();
  }
  std::string qos_class;
  if (auto r = status(**o, pod, qos_class); !r)
    return r.error();
  auto kube_qos = kubeQoS(*spec, qos_class);
  if (!kube_qos)
    return kube_qos.error();
  pod.kube_qos = *kube_qos;
  // Koordinator's QoS label decides; the Kubernetes QoS stands in for pods without one.
  pod.qos = apis::podQoSClassWithDefault(pod.labels, pod.kube_qos);
  return pod;
}

Expected<Node> decodeNode(const json::value& v) {
  auto o = root(v);
  if (!o)
    return o.error();
  kube::ObjectMeta meta;
  kube::ObjectMetaFields read;
  read.members = kube::ObjectMetaFields::kName | kube::ObjectMetaFields::kUid |
                 kube::ObjectMetaFields::kLabels | kube::ObjectMetaFields::kAnnotations;
  if (auto r = kube::decodeObjectMeta(**o, read, meta); !r)
    return r.error();
  Node node;
  node.name = std::move(meta.name);
  node.uid = std::move(meta.uid);
  node.labels = std::move(meta.labels);
  node.annotations = std::move(meta.annotations);
  auto spec = jf::objectField(**o, "spec", "");
  if (!spec)
    return spec.error();
  if (*spec != nullptr) {
    auto unschedulable = jf::boolField(**spec, "unschedulable", "spec");
    if (!unschedulable)
      return unschedulable.error();
    node.unschedulable = *unschedulable;
    if (const json::value* t = jf::field(**spec, "taints")) {
      auto taints = kube::decodeTaints(*t, "spec.taints");
      if (!taints)
        return taints.error();
      node.taints = std::move(*taints);
    }
  }
  auto st = jf::objectField(**o, "status", "");
  if (!st)
    return st.error();
  node.ready = false;
  if (*st != nullptr) {
    if (const json::value* a = jf::field(**st, "allocatable")) {
      auto list = kube::decodeResourceList(*a, "status.allocatable");
      if (!list)
        return list.error();
      node.allocatable = amountsOf(*list);
    }
    auto conditions = jf::objectList(**st, "conditions", "status");
    if (!conditions)
      return conditions.error();
    for (std::size_t i = 0; i < conditions->size(); ++i) {
      const std::string path = jf::indexPath("status.conditions", i);
      auto type = jf::stringField(*(*conditions)[i], "type", path);
      if (!type)
        return type.error();
      if (*type != "Ready")
        continue;
      auto status = jf::stringField(*(*conditions)[i], "status", path);
      if (!status)
        return status.error();
      node.ready = *status == "True";
    }
  }
  return node;
}

Expected<PodDisruptionBudget> decodePodDisruptionBudget(const json::value& v) {
  auto o = root(v);
  if (!o)
    return o.error();
  kube::ObjectMeta meta;
  kube::ObjectMetaFields read;
  read.members = kube::ObjectMetaFields::kNamespace | kube::ObjectMetaFields::kName;
  if (auto r = kube::decodeObjectMeta(**o, read, meta); !r)
    return r.error();
  PodDisruptionBudget pdb;
  pdb.namespace_ = std::move(meta.namespace_);
  pdb.name = std::move(meta.name);
  auto spec = jf::objectField(**o, "spec", "");
  if (!spec)
    return spec.error();
  if (*spec != nullptr) {
    if (const json::value* s = jf::field(**spec, "selector")) {
      auto selector = compiledSelector(*s, "spec.selector");
      if (!selector)
        return selector.error();
      pdb.selector = std::move(*selector);
      pdb.has_selector = true;
    }
  }
  auto st = jf::objectField(**o, "status", "");
  if (!st)
    return st.error();
  if (*st != nullptr) {
    auto allowed = jf::int64Field(**st, "disruptionsAllowed", "status");
    if (!allowed)
      return allowed.error();
    pdb.disruptions_allowed =
        static_cast<std::int32_t>(std::clamp<std::int64_t>(*allowed, 0, 1'000'000'000));
  }
  return pdb;
}

}  // namespace koord::roles::descheduler
