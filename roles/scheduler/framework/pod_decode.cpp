// decodePodInfo: the Pod JSON -> PodInfo projection, with kube-scheduler 1.20's request
// arithmetic (extended for sidecars as component-helpers' PodRequests does it).
#include "pod_info.h"

#include <boost/json.hpp>

#include <algorithm>
#include <array>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "koord/apis/gang.h"
#include "koord/kube/decode.h"
#include "koord/kube/json_fields.h"
#include "koord/kube/object_meta.h"
#include "koord/kube/pod_phase.h"
#include "koord/kube/time.h"

namespace koord::roles::scheduler {
namespace {

using namespace koord::kube::jsonfields;

namespace json = boost::json;
using kube::Expected;
using kube::makeKubeError;

// The pod annotations a plugin reads; every other annotation is dropped at decode (a pod's
// annotations often carry kilobytes of last-applied-configuration). The default plugins of 1.20
// read none; the first three are LoadAware's estimator overrides, the others the Reservation
// plugin's.
constexpr std::array<std::string_view, 17> kKeptPodAnnotations = {
    "scheduling.koordinator.sh/load-estimated-scaling-factors",
    "scheduling.koordinator.sh/load-estimated-seconds-after-initialized",
    "scheduling.koordinator.sh/load-estimated-seconds-after-pod-scheduled",
    apis::kAnnotationReservationAllocated,
    apis::kAnnotationReservationAffinity,
    apis::kAnnotationGangName,
    apis::kAnnotationGangMinAvailable,
    apis::kAnnotationGangWaitingTime,
    apis::kAnnotationGangTotalNumber,
    apis::kAnnotationGangMode,
    apis::kAnnotationGangGroups,
    apis::kAnnotationGangMatchPolicy,
    apis::kAnnotationAliasGangMatchPolicy,
    apis::kAnnotationDeviceAllocated,
    // NodeNUMAResource's: the pod's bind and NUMA policies, and the CPUs a bound pod holds.
    "scheduling.koordinator.sh/resource-spec",
    "scheduling.koordinator.sh/numa-topology-spec",
    apis::kAnnotationResourceStatus,
};

// Each request, limit and overhead must stay below this (in millicores for cpu, in units
// otherwise): NodeInfo sums every pod of a node in plain int64, so a single absurd value must
// not be able to wrap it. 2^53 is 8 PiB of memory or 9 billion cores, far above any machine.
constexpr std::int64_t kMaxPodQuantity = std::int64_t{1} << 53;

// ---- resources ----

bool hasSlash(std::string_view name) {
  return name.find('/') != std::string_view::npos;
}

// What the API server's validation lets a container request: a qualified name; without a
// prefix only cpu, memory, ephemeral-storage and hugepages-<size>. nullopt, or why not.
std::optional<std::string> resourceNameProblem(std::string_view name, bool container) {
  if (auto why = kube::validateLabelKey(name))
    return "invalid resource name: " + *why;
  if (container && !hasSlash(name) && name != kResourceCPU && name != kResourceMemory &&
      name != kResourceEphemeralStorage && !name.starts_with("hugepages-")) {
    return std::string("must be a standard resource for containers");
  }
  return std::nullopt;
}

// Validated, then converted to the scheduler's integers.
Expected<Resource> podResourceList(const json::object& o, std::string_view name,
                                   std::string_view path, bool container,
                                   kube::ResourceList* raw = nullptr) {
  const json::value* v = field(o, name);
  if (v == nullptr)
    return Resource{};
  std::string list_path = childPath(path, name);
  auto list = kube::decodeResourceList(*v, list_path);
  if (!list)
    return list.error();
  for (const auto& [res, q] : *list) {
    // Formatted only on the error path: this runs for every container of every pod listed.
    auto item = [&, &res = res] { return fmt::format("{}[{}]", list_path, res); };
    if (auto why = resourceNameProblem(res, container))
      return makeKubeError(fmt::format("{}: {}", item(), *why));
    if (q.sign() < 0)
      return makeKubeError(fmt::format("{}: must be greater than or equal to 0", item()));
    const std::int64_t converted = res == kResourceCPU ? q.milliValue() : q.value();
    if (converted > kMaxPodQuantity) {
      return makeKubeError(fmt::format("{}: {} is beyond the scheduler's limit of 2^53{}", item(),
                                       q.toString(), res == kResourceCPU ? " millicores" : ""));
    }
  }
  Resource out = Resource::fromList(*list);
  if (raw != nullptr)
    *raw = std::move(*list);
  return out;
}

// a += b; false (a partly changed) when a sum leaves int64. Each term is below 2^53, so this
// takes thousands of containers, but a hostile object may have them.
bool addChecked(Resource& a, const Resource& b) {
  bool overflow = __builtin_add_overflow(a.milli_cpu, b.milli_cpu, &a.milli_cpu);
  overflow |= __builtin_add_overflow(a.memory, b.memory, &a.memory);
  overflow |=
      __builtin_add_overflow(a.ephemeral_storage, b.ephemeral_storage, &a.ephemeral_storage);
  overflow |=
      __builtin_add_overflow(a.allowed_pod_number, b.allowed_pod_number, &a.allowed_pod_number);
  for (const auto& [name, v] : b.scalar) {
    std::int64_t sum = 0;
    overflow |= __builtin_add_overflow(a.scalarValue(name), v, &sum);
    a.setScalar(name, sum);
  }
  return !overflow;
}

struct ContainerSpec {
  Resource requests;
  Resource non_zero_requests;  // requests with kube-scheduler's defaults for absent cpu/memory
  Resource limits;
  apis::ContainerResources raw;  // for the Kubernetes QoS class
  std::vector<HostPort> host_ports;
  bool sidecar = false;  // an init container with restartPolicy: Always
};

Expected<std::string> protocolOf(const json::object& port, std::string_view path) {
  auto p = stringField(port, "protocol", path);
  if (!p)
    return p.error();
  if (p->empty())
    return std::string("TCP");
  if (*p == "TCP" || *p == "UDP" || *p == "SCTP")
    return p;
  return makeKubeError(fmt::format(
      "{}.protocol: unsupported value \"{}\": supported values: \"SCTP\", \"TCP\", \"UDP\"", path,
      *p));
}

Expected<std::vector<HostPort>> hostPorts(const json::object& c, std::string_view path) {
  std::vector<HostPort> out;
  auto ports = objectList(c, "ports", path);
  if (!ports)
    return ports.error();
  for (std::size_t i = 0; i < ports->size(); ++i) {
    const json::object& p = *(*ports)[i];
    std::string ppath = indexPath(childPath(path, "ports"), i);
    const json::value* hp = field(p, "hostPort");
    if (hp == nullptr)
      continue;
    auto port = int32Value(*hp, childPath(ppath, "hostPort"));
    if (!port)
      return port.error();
    if (*port < 0 || *port > 65535) {
      return makeKubeError(fmt::format("{}.hostPort: {} is not between 0 and 65535", ppath, *port));
    }
    if (*port == 0)  // no host port: only the container port, which NodePorts ignores
      continue;
    auto protocol = protocolOf(p, ppath);
    if (!protocol)
      return protocol.error();
    auto ip = stringField(p, "hostIP", ppath);
    if (!ip)
      return ip.error();
    HostPort h;
    h.port = *port;
    h.protocol = std::move(*protocol);
    if (!ip->empty())
      h.host_ip = std::move(*ip);
    out.push_back(std::move(h));
  }
  return out;
}

Expected<std::vector<ContainerSpec>> containers(const json::object& spec, std::string_view name,
                                                bool init) {
  std::vector<ContainerSpec> out;
  std::string list_path = childPath("spec", name);
  auto items = objectList(spec, name, "spec");
  if (!items)
    return items.error();
  out.reserve(items->size());
  for (std::size_t i = 0; i < items->size(); ++i) {
    const json::object& c = *(*items)[i];
    std::string path = indexPath(list_path, i);
    ContainerSpec cs;
    auto resources = objectField(c, "resources", path);
    if (!resources)
      return resources.error();
    if (*resources != nullptr) {
      std::string rpath = childPath(path, "resources");
      auto requests = podResourceList(**resources, "requests", rpath, true, &cs.raw.requests);
      if (!requests)
        return requests.error();
      cs.requests = std::move(*requests);
      auto limits = podResourceList(**resources, "limits", rpath, true, &cs.raw.limits);
      if (!limits)
        return limits.error();
      cs.limits = std::move(*limits);
    }
    // GetNonzeroRequestForResource: only an absent request is defaulted; an explicit 0 stays.
    cs.non_zero_requests = cs.requests;
    if (!cs.raw.requests.contains(kResourceCPU))
      cs.non_zero_requests.milli_cpu = kDefaultMilliCPURequest;
    if (!cs.raw.requests.contains(kResourceMemory))
      cs.non_zero_requests.memory = kDefaultMemoryRequest;
    if (init) {
      auto restart = stringField(c, "restartPolicy", path);
      if (!restart)
        return restart.error();
      if (*restart == "Always") {
        cs.sidecar = true;
      } else if (!restart->empty()) {
        return makeKubeError(
            fmt::format("{}.restartPolicy: unsupported value \"{}\": supported values: \"Always\"",
                        path, *restart));
      }
    }
    auto ports = hostPorts(c, path);
    if (!ports)
      return ports.error();
    cs.host_ports = std::move(*ports);
    out.push_back(std::move(cs));
  }
  return out;
}

// component-helpers' AggregateContainerRequests over one of requests / non-zero requests /
// limits: containers summed; each init container is a floor, together with the sidecars
// started before it; sidecars also run beside the containers, so they join the sum. For a pod
// without sidecars this is 1.20's max(sum(containers), each init container).
template <typename Pick>
Expected<Resource> aggregate(const std::vector<ContainerSpec>& regular,
                             const std::vector<ContainerSpec>& init, std::string_view what,
                             Pick pick) {
  auto overflow = [&] {
    return makeKubeError(fmt::format("spec: the pod's summed {} overflow int64", what));
  };
  Resource sum;
  for (const auto& c : regular) {
    if (!addChecked(sum, pick(c)))
      return overflow();
  }
  Resource sidecars;
  Resource init_floor;
  for (const auto& c : init) {
    Resource running;  // what runs while this init container does
    if (c.sidecar) {
      if (!addChecked(sum, pick(c)) || !addChecked(sidecars, pick(c)))
        return overflow();
      running = sidecars;
    } else {
      running = pick(c);
      if (!addChecked(running, sidecars))
        return overflow();
    }
    init_floor.setMax(running);
  }
  sum.setMax(init_floor);
  return sum;
}

// ---- affinity ----

// metav1.LabelSelectorAsSelector: absent or null matches nothing, {} everything.
Expected<kube::Selector> labelSelectorField(const json::object& o, std::string_view path) {
  const json::value* v = field(o, "labelSelector");
  if (v == nullptr)
    return kube::Selector::nothing();
  std::string spath = childPath(path, "labelSelector");
  auto decoded = kube::decodeLabelSelector(*v, spath);
  if (!decoded)
    return decoded.error();
  auto selector = kube::toSelector(*decoded);
  if (!selector)
    return makeKubeError(fmt::format("{}.{}", spath, selector.error().message));
  return selector;
}

Expected<PodAffinityTerm> podAffinityTerm(const json::object& o, std::string_view path,
                                          const std::string& pod_namespace) {
  PodAffinityTerm term;
  auto selector = labelSelectorField(o, path);
  if (!selector)
    return selector.error();
  term.label_selector = std::move(*selector);
  auto namespaces = stringList(o, "namespaces", path);
  if (!namespaces)
    return namespaces.error();
  term.namespaces = std::move(*namespaces);
  if (term.namespaces.empty()) {
    term.namespaces.push_back(pod_namespace);
  } else {
    // A set in kube-scheduler (sets.String): order and repeats carry no meaning.
    std::sort(term.namespaces.begin(), term.namespaces.end());
    term.namespaces.erase(std::unique(term.namespaces.begin(), term.namespaces.end()),
                          term.namespaces.end());
  }
  auto key = stringField(o, "topologyKey", path);
  if (!key)
    return key.error();
  term.topology_key = std::move(*key);
  return term;
}

Expected<PodAffinityRules> podAffinityRules(const json::object& o, std::string_view path,
                                            const std::string& pod_namespace) {
  PodAffinityRules out;
  auto required = objectList(o, "requiredDuringSchedulingIgnoredDuringExecution", path);
  if (!required)
    return required.error();
  std::string rpath = childPath(path, "requiredDuringSchedulingIgnoredDuringExecution");
  for (std::size_t i = 0; i < required->size(); ++i) {
    auto term = podAffinityTerm(*(*required)[i], indexPath(rpath, i), pod_namespace);
    if (!term)
      return term.error();
    out.required.push_back(std::move(*term));
  }
  auto preferred = objectList(o, "preferredDuringSchedulingIgnoredDuringExecution", path);
  if (!preferred)
    return preferred.error();
  std::string ppath = childPath(path, "preferredDuringSchedulingIgnoredDuringExecution");
  for (std::size_t i = 0; i < preferred->size(); ++i) {
    const json::object& w = *(*preferred)[i];
    std::string wpath = indexPath(ppath, i);
    WeightedPodAffinityTerm weighted;
    if (const json::value* weight = field(w, "weight")) {
      auto parsed = int32Value(*weight, childPath(wpath, "weight"));
      if (!parsed)
        return parsed.error();
      weighted.weight = *parsed;
    }
    auto term_obj = objectField(w, "podAffinityTerm", wpath);
    if (!term_obj)
      return term_obj.error();
    if (*term_obj != nullptr) {
      auto term = podAffinityTerm(**term_obj, childPath(wpath, "podAffinityTerm"), pod_namespace);
      if (!term)
        return term.error();
      weighted.term = std::move(*term);
    } else {
      // Go's zero PodAffinityTerm: a nil selector, which selects nothing.
      weighted.term.label_selector = kube::Selector::nothing();
      weighted.term.namespaces.push_back(pod_namespace);
    }
    out.preferred.push_back(std::move(weighted));
  }
  return out;
}

Expected<void> decodeAffinity(const json::object& spec, PodInfo& pod) {
  auto affinity = objectField(spec, "affinity", "spec");
  if (!affinity)
    return affinity.error();
  if (*affinity == nullptr)
    return {};
  const json::object& a = **affinity;
  if (const json::value* na = field(a, "nodeAffinity")) {
    auto decoded = kube::decodeNodeAffinity(*na, "spec.affinity.nodeAffinity");
    if (!decoded)
      return decoded.error();
    pod.node_affinity = std::move(*decoded);
  }
  auto pa = objectField(a, "podAffinity", "spec.affinity");
  if (!pa)
    return pa.error();
  if (*pa != nullptr) {
    auto rules = podAffinityRules(**pa, "spec.affinity.podAffinity", pod.namespace_);
    if (!rules)
      return rules.error();
    pod.pod_affinity = std::move(*rules);
  }
  auto paa = objectField(a, "podAntiAffinity", "spec.affinity");
  if (!paa)
    return paa.error();
  if (*paa != nullptr) {
    auto rules = podAffinityRules(**paa, "spec.affinity.podAntiAffinity", pod.namespace_);
    if (!rules)
      return rules.error();
    pod.pod_anti_affinity = std::move(*rules);
  }
  return {};
}

Expected<std::vector<TopologySpreadConstraint>> spreadConstraints(const json::object& spec) {
  std::vector<TopologySpreadConstraint> out;
  auto items = objectList(spec, "topologySpreadConstraints", "spec");
  if (!items)
    return items.error();
  for (std::size_t i = 0; i < items->size(); ++i) {
    const json::object& c = *(*items)[i];
    std::string path = indexPath("spec.topologySpreadConstraints", i);
    TopologySpreadConstraint tsc;
    std::int32_t skew = 0;
    if (const json::value* v = field(c, "maxSkew")) {
      auto parsed = int32Value(*v, childPath(path, "maxSkew"));
      if (!parsed)
        return parsed.error();
      skew = *parsed;
    }
    if (skew <= 0)
      return makeKubeError(fmt::format("{}.maxSkew: {} must be greater than zero", path, skew));
    tsc.max_skew = skew;
    auto key = stringField(c, "topologyKey", path);
    if (!key)
      return key.error();
    tsc.topology_key = std::move(*key);
    auto when = stringField(c, "whenUnsatisfiable", path);
    if (!when)
      return when.error();
    if (*when == "DoNotSchedule") {
      tsc.when_unsatisfiable = UnsatisfiableConstraintAction::kDoNotSchedule;
    } else if (*when == "ScheduleAnyway") {
      tsc.when_unsatisfiable = UnsatisfiableConstraintAction::kScheduleAnyway;
    } else {
      return makeKubeError(
          fmt::format("{}.whenUnsatisfiable: unsupported value \"{}\": supported values: "
                      "\"DoNotSchedule\", \"ScheduleAnyway\"",
                      path, *when));
    }
    auto selector = labelSelectorField(c, path);
    if (!selector)
      return selector.error();
    tsc.label_selector = std::move(*selector);
    out.push_back(std::move(tsc));
  }
  return out;
}

// ---- metadata and status ----

// LoadAware's assign cache counts a pod's estimate from when it was scheduled or initialized:
// the True PodScheduled and Initialized conditions' lastTransitionTime. Other conditions are
// not read.
Expected<void> readConditionTime(const json::object& c, const std::string& path, PodInfo& pod) {
  auto type = stringField(c, "type", path);
  if (!type)
    return type.error();
  std::optional<std::chrono::system_clock::time_point>* target = nullptr;
  if (*type == "PodScheduled")
    target = &pod.scheduled_at;
  else if (*type == "Initialized")
    target = &pod.initialized_at;
  else
    return {};
  auto status = stringField(c, "status", path);
  if (!status)
    return status.error();
  auto when = stringField(c, "lastTransitionTime", path);
  if (!when)
    return when.error();
  if (*status != "True" || when->empty())
    return {};
  auto t = timeValue(*when, path + ".lastTransitionTime");
  if (!t)
    return t.error();
  *target = *t;
  return {};
}

Expected<void> decodeMetadata(const json::object& root, PodInfo& pod) {
  using F = kube::ObjectMetaFields;
  static constexpr F kRead{
      .members = F::kNamespace | F::kName | F::kUid | F::kResourceVersion | F::kLabels |
                 F::kAnnotations | F::kCreationTimestamp | F::kDeletionTimestamp |
                 F::kControllerRef,
      .kept_annotations = kKeptPodAnnotations,
  };
  kube::ObjectMeta meta;
  if (auto ok = kube::decodeObjectMeta(root, kRead, meta); !ok)
    return ok;
  pod.namespace_ = std::move(meta.namespace_);
  pod.name = std::move(meta.name);
  pod.uid = std::move(meta.uid);
  pod.resource_version = std::move(meta.resource_version);
  pod.labels = std::move(meta.labels);
  pod.annotations = std::move(meta.annotations);
  if (meta.creation_timestamp)
    pod.creation_timestamp = *meta.creation_timestamp;
  pod.terminating = meta.deletion_timestamp.has_value();
  pod.controller_kind = std::move(meta.controller_kind);
  pod.controller_name = std::move(meta.controller_name);
  pod.controller_uid = std::move(meta.controller_uid);
  pod.controller_api_version = std::move(meta.controller_api_version);
  refreshReservationAnnotations(pod);
  if (auto it = pod.labels.find(apis::kLabelPodPriority); it != pod.labels.end()) {
    std::int32_t v = 0;
    const std::string& s = it->second;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec == std::errc() && end == s.data() + s.size())
      pod.sub_priority = v;
  }
  // A gang name too long to be a PodGroup's leaves the pod in no gang, with the reason kept for
  // Coscheduling to refuse it with.
  if (auto gang = apis::podGangId(pod.namespace_, pod.labels, pod.annotations); !gang)
    pod.gang_error = gang.error().message;
  else if (*gang)
    pod.gang_id = std::move(**gang);
  return {};
}

Expected<void> decodeSpecScalars(const json::object& s, PodInfo& pod,
                                 std::optional<std::int32_t>& priority) {
  auto scheduler = stringField(s, "schedulerName", "spec");
  if (!scheduler)
    return scheduler.error();
  if (!scheduler->empty())
    pod.scheduler_name = std::move(*scheduler);
  auto node_name = stringField(s, "nodeName", "spec");
  if (!node_name)
    return node_name.error();
  pod.node_name = std::move(*node_name);
  if (const json::value* p = field(s, "priority")) {
    auto parsed = int32Value(*p, "spec.priority");
    if (!parsed)
      return parsed.error();
    priority = *parsed;
    pod.priority = *parsed;
  }
  auto preemption = stringField(s, "preemptionPolicy", "spec");
  if (!preemption)
    return preemption.error();
  if (*preemption == "Never") {
    pod.preempt_never = true;
  } else if (!preemption->empty() && *preemption != "PreemptLowerPriority") {
    return makeKubeError(
        fmt::format("spec.preemptionPolicy: unsupported value \"{}\": supported values: "
                    "\"Never\", \"PreemptLowerPriority\"",
                    *preemption));
  }
  if (const json::value* ns = field(s, "nodeSelector")) {
    auto decoded = kube::decodeStringMap(*ns, "spec.nodeSelector");
    if (!decoded)
      return decoded.error();
    pod.node_selector = std::move(*decoded);
  }
  if (const json::value* t = field(s, "tolerations")) {
    auto decoded = kube::decodeTolerations(*t, "spec.tolerations");
    if (!decoded)
      return decoded.error();
    pod.tolerations = std::move(*decoded);
  }
  return {};
}

// Requests, non-zero requests, limits and host ports from the containers and the overhead;
// `for_qos` gets every container's lists for the Kubernetes QoS class.
Expected<void> decodeResources(const json::object& s, PodInfo& pod,
                               std::vector<apis::ContainerResources>& for_qos) {
  auto regular = containers(s, "containers", /*init=*/false);
  if (!regular)
    return regular.error();
  auto init = containers(s, "initContainers", /*init=*/true);
  if (!init)
    return init.error();
  auto overhead = podResourceList(s, "overhead", "spec", /*container=*/false);
  if (!overhead)
    return overhead.error();

  auto requests = aggregate(*regular, *init, "requests",
                            [](const ContainerSpec& c) -> const Resource& { return c.requests; });
  if (!requests)
    return requests.error();
  auto non_zero =
      aggregate(*regular, *init, "requests",
                [](const ContainerSpec& c) -> const Resource& { return c.non_zero_requests; });
  if (!non_zero)
    return non_zero.error();
  auto limits = aggregate(*regular, *init, "limits",
                          [](const ContainerSpec& c) -> const Resource& { return c.limits; });
  if (!limits)
    return limits.error();
  if (!addChecked(*requests, *overhead) || !addChecked(*non_zero, *overhead))
    return makeKubeError("spec.overhead: the pod's summed requests overflow int64");
  // PodLimits adds the overhead only to resources some container limits: a pod without a
  // memory limit stays unlimited in memory.
  std::set<std::string, std::less<>> limited;
  for (const auto* list : {&*regular, &*init}) {
    for (const auto& c : *list) {
      for (const auto& [name, q] : c.raw.limits)
        limited.insert(name);
    }
  }
  Resource overhead_limited;
  for (const auto& name : limited) {
    const std::int64_t v = overhead->get(name);
    if (name == kResourceCPU)
      overhead_limited.milli_cpu = v;
    else if (name == kResourceMemory)
      overhead_limited.memory = v;
    else if (name == kResourceEphemeralStorage)
      overhead_limited.ephemeral_storage = v;
    else if (name == kResourcePods)
      overhead_limited.allowed_pod_number = v;
    else
      overhead_limited.setScalar(name, v);
  }
  if (!addChecked(*limits, overhead_limited))
    return makeKubeError("spec.overhead: the pod's summed limits overflow int64");
  pod.requests = std::move(*requests);
  pod.non_zero_requests = std::move(*non_zero);
  pod.limits = std::move(*limits);

  // GetHostPorts: sidecars first (they run for the pod's whole life), then the containers.
  for (const auto& c : *init) {
    if (c.sidecar)
      pod.host_ports.insert(pod.host_ports.end(), c.host_ports.begin(), c.host_ports.end());
  }
  for (const auto& c : *regular)
    pod.host_ports.insert(pod.host_ports.end(), c.host_ports.begin(), c.host_ports.end());

  for (const auto* list : {&*regular, &*init}) {
    for (const auto& c : *list)
      for_qos.push_back(c.raw);
  }
  return {};
}

// ---- volumes and images ----

// The members of `volume` naming its source, among those the volume plugins tell apart: the
// claims (an ephemeral volume's has no identity member), then the disks a PV may hold too.
constexpr auto kVolumeSources = [] {
  std::array<VolumeSourceField, 2 + kDiskVolumeSources.size()> all{{
      {"persistentVolumeClaim", VolumeSourceKind::kPersistentVolumeClaim, "claimName"},
      {"ephemeral", VolumeSourceKind::kEphemeral, ""},
  }};
  std::copy(kDiskVolumeSources.begin(), kDiskVolumeSources.end(), all.begin() + 2);
  return all;
}();

Expected<void> decodeVolumeSource(const json::object& v, std::string_view path, PodVolume& out,
                                  std::string_view pod_name) {
  for (const VolumeSourceField& f : kVolumeSources) {
    auto source = objectField(v, f.member, path);
    if (!source)
      return source.error();
    if (*source == nullptr)
      continue;
    const json::object& src = **source;
    const std::string spath = childPath(path, f.member);
    out.kind = f.kind;
    if (f.kind == VolumeSourceKind::kEphemeral) {
      out.id = fmt::format("{}-{}", pod_name, out.name);
      return {};
    }
    auto id = stringField(src, f.id_field, spath);
    if (!id)
      return id.error();
    out.id = std::move(*id);
    auto read_only = boolField(src, "readOnly", spath);
    if (!read_only)
      return read_only.error();
    out.read_only = *read_only;
    if (f.kind == VolumeSourceKind::kRBD) {
      auto monitors = stringList(src, "monitors", spath);
      if (!monitors)
        return monitors.error();
      out.monitors = std::move(*monitors);
      auto pool = stringField(src, "pool", spath);
      if (!pool)
        return pool.error();
      out.pool = pool->empty() ? std::string("rbd") : std::move(*pool);  // the API's default
    }
    return {};
  }
  return {};
}

Expected<void> decodeVolumes(const json::object& s, PodInfo& pod) {
  auto items = objectList(s, "volumes", "spec");
  if (!items)
    return items.error();
  if (items->size() > kMaxPodVolumes) {
    return makeKubeError(fmt::format("spec.volumes: {} volumes, more than the scheduler's {}",
                                     items->size(), kMaxPodVolumes));
  }
  pod.volumes.reserve(items->size());
  for (std::size_t i = 0; i < items->size(); ++i) {
    const std::string path = indexPath("spec.volumes", i);
    PodVolume volume;
    auto name = stringField(*(*items)[i], "name", path);
    if (!name)
      return name.error();
    volume.name = std::move(*name);
    if (auto ok = decodeVolumeSource(*(*items)[i], path, volume, pod.name); !ok)
      return ok.error();
    pod.volumes.push_back(std::move(volume));
  }
  return {};
}

// spec.schedulingGates' names, and how many spec.resourceClaims there are.
Expected<void> decodeGatesAndClaims(const json::object& s, PodInfo& pod) {
  auto gates = objectList(s, "schedulingGates", "spec");
  if (!gates)
    return gates.error();
  if (gates->size() > kMaxSchedulingGates) {
    return makeKubeError(fmt::format("spec.schedulingGates: {} gates, more than the scheduler's {}",
                                     gates->size(), kMaxSchedulingGates));
  }
  pod.scheduling_gates.reserve(gates->size());
  for (std::size_t i = 0; i < gates->size(); ++i) {
    auto name = stringField(*(*gates)[i], "name", indexPath("spec.schedulingGates", i));
    if (!name)
      return name.error();
    pod.scheduling_gates.push_back(std::move(*name));
  }
  auto claims = objectList(s, "resourceClaims", "spec");
  if (!claims)
    return claims.error();
  pod.resource_claims = claims->size();
  return {};
}

Expected<void> decodeImages(const json::object& s, PodInfo& pod) {
  auto items = objectList(s, "containers", "spec");
  if (!items)
    return items.error();
  if (items->size() > kMaxPodContainers) {
    return makeKubeError(fmt::format("spec.containers: {} containers, more than the scheduler's {}",
                                     items->size(), kMaxPodContainers));
  }
  pod.container_images.reserve(items->size());
  for (std::size_t i = 0; i < items->size(); ++i) {
    auto image = stringField(*(*items)[i], "image", indexPath("spec.containers", i));
    if (!image)
      return image.error();
    pod.container_images.push_back(std::move(*image));
  }
  return {};
}

}  // namespace

void refreshReservationAnnotations(PodInfo& pod) {
  pod.reservation_name.clear();
  pod.reservation_uid.clear();
  if (auto allocated = apis::reservationAllocated(pod.annotations); allocated && *allocated) {
    pod.reservation_name = std::move((*allocated)->name);
    pod.reservation_uid = std::move((*allocated)->uid);
  }
  pod.reservation_affinity.reset();
  pod.reservation_affinity_error.clear();
  if (auto affinity = apis::reservationAffinity(pod.annotations); !affinity)
    pod.reservation_affinity_error = affinity.error().message;
  else
    pod.reservation_affinity = std::move(*affinity);
  auto ignored = pod.labels.find(apis::kLabelReservationIgnored);
  pod.reservation_ignored = ignored != pod.labels.end() && ignored->second == "true";
}

kube::Expected<PodInfo> decodePodInfo(const boost::json::value& v) {
  if (!v.is_object())
    return typeError("Pod", "object", v);
  const json::object& root = v.get_object();
  PodInfo pod;
  if (auto ok = decodeMetadata(root, pod); !ok)
    return ok.error();

  std::optional<std::int32_t> priority;
  std::vector<apis::ContainerResources> for_qos;
  auto spec = objectField(root, "spec", "");
  if (!spec)
    return spec.error();
  if (*spec != nullptr) {
    const json::object& s = **spec;
    if (auto ok = decodeSpecScalars(s, pod, priority); !ok)
      return ok.error();
    if (auto ok = decodeResources(s, pod, for_qos); !ok)
      return ok.error();
    if (auto ok = decodeAffinity(s, pod); !ok)
      return ok.error();
    if (auto ok = decodeVolumes(s, pod); !ok)
      return ok.error();
    if (auto ok = decodeImages(s, pod); !ok)
      return ok.error();
    if (auto ok = decodeGatesAndClaims(s, pod); !ok)
      return ok.error();
    auto spread = spreadConstraints(s);
    if (!spread)
      return spread.error();
    pod.topology_spread_constraints = std::move(*spread);
  }

  std::string status_qos;
  auto status = objectField(root, "status", "");
  if (!status)
    return status.error();
  if (*status != nullptr) {
    auto phase = stringField(**status, "phase", "status");
    if (!phase)
      return phase.error();
    auto parsed = kube::decodePodPhase<PodPhase>(*phase);
    if (!parsed)
      return parsed.error();
    pod.phase = *parsed;
    auto nominated = stringField(**status, "nominatedNodeName", "status");
    if (!nominated)
      return nominated.error();
    pod.nominated_node_name = std::move(*nominated);
    auto started = stringField(**status, "startTime", "status");
    if (!started)
      return started.error();
    if (!started->empty()) {
      auto t = timeValue(*started, "status.startTime");
      if (!t)
        return t.error();
      pod.start_time = *t;
    }
    auto conditions = objectList(**status, "conditions", "status");
    if (!conditions)
      return conditions.error();
    for (std::size_t i = 0; i < conditions->size(); ++i) {
      auto done = readConditionTime(*(*conditions)[i], indexPath("status.conditions", i), pod);
      if (!done)
        return done.error();
    }
    auto qos = stringField(**status, "qosClass", "status");
    if (!qos)
      return qos.error();
    status_qos = std::move(*qos);
  }

  // status.qosClass is set by the API server on create; computing it covers objects that never
  // went through one.
  const apis::KubeQoS kube_qos = apis::kubeQoSFromStatus(status_qos, for_qos);
  pod.qos = apis::podQoSClassWithDefault(pod.labels, kube_qos);
  pod.priority_class = apis::podPriorityClassRaw(pod.labels, priority);
  return pod;
}

}  // namespace koord::roles::scheduler
