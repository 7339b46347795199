#include "noderesource/node_view.h"

#include <boost/json.hpp>

#include <algorithm>
#include <charconv>
#include <limits>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "koord/apis/elastic_quota.h"
#include "koord/kube/decode.h"
#include "koord/kube/json_fields.h"
#include "koord/kube/object_meta.h"
#include "noderesource/quantity_math.h"

namespace koord::roles::manager::noderesource {
namespace {

using namespace koord::kube::jsonfields;

namespace json = boost::json;
using kube::Expected;

Expected<kube::ResourceList> resourceListField(const json::object& o, std::string_view name,
                                               std::string_view path) {
  const json::value* v = field(o, name);
  if (v == nullptr)
    return kube::ResourceList();
  return kube::decodeResourceList(*v, childPath(path, name));
}

std::optional<kube::Quantity> lookup(const kube::ResourceList& list, std::string_view name) {
  auto it = list.find(name);
  if (it == list.end())
    return std::nullopt;
  return it->second;
}

PodPhase phaseByName(std::string_view phase) {
  if (phase == "Running")
    return PodPhase::kRunning;
  if (phase == "Pending")
    return PodPhase::kPending;
  if (phase == "Succeeded")
    return PodPhase::kSucceeded;
  if (phase == "Failed")
    return PodPhase::kFailed;
  return PodPhase::kUnknown;
}

struct Container {
  apis::ContainerResources resources;
  bool sidecar = false;  // an init container with restartPolicy: Always (KEP-753)
};

Expected<std::vector<Container>> containers(const json::object& spec, std::string_view name) {
  std::vector<Container> out;
  const json::value* v = field(spec, name);
  if (v == nullptr)
    return out;
  std::string list_path = childPath("spec", name);
  if (!v->is_array())
    return typeError(list_path, "array", *v);
  const json::array& items = v->get_array();
  out.reserve(items.size());
  for (std::size_t i = 0; i < items.size(); ++i) {
    std::string path = fmt::format("{}[{}]", list_path, i);
    if (!items[i].is_object())
      return typeError(path, "object", items[i]);
    const json::object& c = items[i].get_object();
    Container container;
    auto resources = objectField(c, "resources", path);
    if (!resources)
      return resources.error();
    if (*resources != nullptr) {
      std::string rpath = childPath(path, "resources");
      auto requests = resourceListField(**resources, "requests", rpath);
      if (!requests)
        return requests.error();
      auto limits = resourceListField(**resources, "limits", rpath);
      if (!limits)
        return limits.error();
      container.resources.requests = std::move(*requests);
      container.resources.limits = std::move(*limits);
    }
    auto restart = stringField(c, "restartPolicy", path);
    if (!restart)
      return restart.error();
    container.sidecar = *restart == "Always";
    out.push_back(std::move(container));
  }
  return out;
}

// component-helpers' PodRequests for cpu and memory (see PodView::requests).
CpuMemory effectiveRequests(const std::vector<Container>& regular,
                            const std::vector<Container>& init, const kube::ResourceList& pod_level,
                            const kube::ResourceList& overhead) {
  CpuMemory sum;
  for (const auto& c : regular)
    addSat(sum, cpuMemoryOf(c.resources.requests));
  CpuMemory sidecars;
  CpuMemory init_floor;
  for (const auto& c : init) {
    CpuMemory own = cpuMemoryOf(c.resources.requests);
    CpuMemory running;  // what is running while this init container runs
    if (c.sidecar) {
      addSat(sum, own);
      addSat(sidecars, own);
      running = sidecars;
    } else {
      running = own;
      addSat(running, sidecars);
    }
    init_floor = maxCM(init_floor, running);
  }
  CpuMemory out = maxCM(sum, init_floor);
  if (auto cpu = lookup(pod_level, "cpu"))
    out.cpu = *cpu;
  if (auto memory = lookup(pod_level, "memory"))
    out.memory = *memory;
  addSat(out, cpuMemoryOf(overhead));
  return out;
}

Expected<std::int64_t> parseCPUId(std::string_view text, std::string_view whole) {
  // strconv.Atoi: an optional sign, decimal digits.
  std::string_view digits = text;
  if (!digits.empty() && digits.front() == '+')
    digits.remove_prefix(1);
  std::int64_t value = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size())
    return kube::makeKubeError(fmt::format("invalid cpuset \"{}\": bad cpu \"{}\"", whole, text));
  return value;
}

}  // namespace

kube::Expected<std::int64_t> countCPUSet(std::string_view cpuset) {
  if (cpuset.empty())
    return std::int64_t{0};
  std::vector<std::pair<std::int64_t, std::int64_t>> ranges;
  std::string_view rest = cpuset;
  while (true) {
    std::size_t comma = rest.find(',');
    std::string_view part = rest.substr(0, comma);
    std::size_t dash = part.find('-');
    auto first = parseCPUId(part.substr(0, dash), cpuset);
    if (!first)
      return first.error();
    std::int64_t last = *first;
    if (dash != std::string_view::npos) {
      auto parsed = parseCPUId(part.substr(dash + 1), cpuset);
      if (!parsed)
        return parsed.error();
      last = *parsed;
      if (*first > last) {
        return kube::makeKubeError(
            fmt::format("invalid cpuset \"{}\": range \"{}\" is backwards", cpuset, part));
      }
    }
    ranges.emplace_back(*first, last);
    if (comma == std::string_view::npos)
      break;
    rest.remove_prefix(comma + 1);
  }
  std::sort(ranges.begin(), ranges.end());
  std::int64_t count = 0;
  std::int64_t covered_to = std::numeric_limits<std::int64_t>::min();  // last cpu counted
  bool any = false;
  for (auto [first, last] : ranges) {
    if (any && last <= covered_to)
      continue;
    std::int64_t from = (any && first <= covered_to) ? covered_to + 1 : first;
    // last - from + 1 cannot overflow for ids in [0, INT64_MAX]; saturate the total instead.
    std::int64_t len = last - from + 1;
    count = count > std::numeric_limits<std::int64_t>::max() - len
                ? std::numeric_limits<std::int64_t>::max()
                : count + len;
    covered_to = last;
    any = true;
  }
  return count;
}

kube::Expected<std::optional<kube::ResourceList>> parseNodeReservation(
    std::string_view annotation) {
  using Result = std::optional<kube::ResourceList>;
  boost::system::error_code ec;
  json::value v = json::parse(annotation, ec);
  if (ec)
    return kube::makeKubeError(fmt::format("invalid JSON: {}", ec.message()));
  // json.Unmarshal of "null" into a *NodeReservation leaves it nil: no reservation, no error.
  if (v.is_null())
    return Result();
  if (!v.is_object())
    return typeError("reservation", "object", v);
  const json::object& o = v.get_object();
  auto resources = resourceListField(o, "resources", "");
  if (!resources)
    return resources.error();
  auto cpus = stringField(o, "reservedCPUs", "");
  if (!cpus)
    return cpus.error();
  auto policy = stringField(o, "applyPolicy", "");
  if (!policy)
    return policy.error();
  if (!cpus->empty()) {
    auto count = countCPUSet(*cpus);
    if (!count)
      return kube::makeKubeError(fmt::format("reservedCPUs: {}", count.error().message));
    resources->insert_or_assign("cpu", kube::Quantity::fromInt(*count));
  }
  return Result(std::move(*resources));
}

kube::Expected<NodeView> decodeNodeView(const boost::json::value& v) {
  if (!v.is_object())
    return typeError("Node", "object", v);
  const json::object& root = v.get_object();
  NodeView out;

  using F = kube::ObjectMetaFields;
  kube::ObjectMeta meta;
  if (auto ok =
          kube::decodeObjectMeta(root, {.members = F::kName | F::kLabels | F::kAnnotations}, meta);
      !ok) {
    return ok.error();
  }
  out.name = std::move(meta.name);
  out.labels = std::move(meta.labels);
  out.annotations = std::move(meta.annotations);

  auto status = objectField(root, "status", "");
  if (!status)
    return status.error();
  if (*status != nullptr) {
    auto capacity = resourceListField(**status, "capacity", "status");
    if (!capacity)
      return capacity.error();
    out.capacity = std::move(*capacity);
    auto allocatable = resourceListField(**status, "allocatable", "status");
    if (!allocatable)
      return allocatable.error();
    out.allocatable = std::move(*allocatable);
  }
  out.current_batch.cpu = lookup(out.allocatable, apis::kBatchCPU);
  out.current_batch.memory = lookup(out.allocatable, apis::kBatchMemory);
  out.current_mid.cpu = lookup(out.allocatable, apis::kMidCPU);
  out.current_mid.memory = lookup(out.allocatable, apis::kMidMemory);

  if (auto it = out.annotations.find(apis::kAnnotationNodeReservation);
      it != out.annotations.end() && !it->second.empty()) {
    auto reservation = parseNodeReservation(it->second);
    if (reservation) {
      out.reservation = std::move(*reservation);
    } else {
      out.reservation_error =
          fmt::format("annotation {} ignored: {}", apis::kAnnotationNodeReservation,
                      reservation.error().message);
    }
  }
  return out;
}

kube::Expected<PodView> decodePodView(const boost::json::value& v) {
  if (!v.is_object())
    return typeError("Pod", "object", v);
  const json::object& root = v.get_object();
  PodView out;

  using F = kube::ObjectMetaFields;
  kube::ObjectMeta meta;
  if (auto ok = kube::decodeObjectMeta(
          root, {.members = F::kNamespace | F::kName | F::kUid | F::kLabels}, meta);
      !ok) {
    return ok.error();
  }
  out.namespace_ = std::move(meta.namespace_);
  out.name = std::move(meta.name);
  out.uid = std::move(meta.uid);
  kube::Labels labels = std::move(meta.labels);
  if (auto it = labels.find(apis::kLabelQuotaName); it != labels.end())
    out.quota_name = it->second;

  std::vector<Container> regular;
  std::vector<Container> init;
  kube::ResourceList pod_level;
  kube::ResourceList overhead;
  std::optional<std::int32_t> priority;
  auto spec = objectField(root, "spec", "");
  if (!spec)
    return spec.error();
  if (*spec != nullptr) {
    const json::object& s = **spec;
    auto node_name = stringField(s, "nodeName", "spec");
    if (!node_name)
      return node_name.error();
    out.node_name = std::move(*node_name);
    auto decoded_regular = containers(s, "containers");
    if (!decoded_regular)
      return decoded_regular.error();
    regular = std::move(*decoded_regular);
    auto decoded_init = containers(s, "initContainers");
    if (!decoded_init)
      return decoded_init.error();
    init = std::move(*decoded_init);
    auto decoded_overhead = resourceListField(s, "overhead", "spec");
    if (!decoded_overhead)
      return decoded_overhead.error();
    overhead = std::move(*decoded_overhead);
    auto resources = objectField(s, "resources", "spec");
    if (!resources)
      return resources.error();
    if (*resources != nullptr) {
      auto requests = resourceListField(**resources, "requests", "spec.resources");
      if (!requests)
        return requests.error();
      pod_level = std::move(*requests);
    }
    if (const json::value* p = field(s, "priority")) {
      bool in_range =
          (p->is_int64() && p->get_int64() >= INT32_MIN && p->get_int64() <= INT32_MAX) ||
          (p->is_uint64() && p->get_uint64() <= INT32_MAX);
      if (!in_range)
        return typeError("spec.priority", "int32", *p);
      priority = static_cast<std::int32_t>(
          p->is_int64() ? p->get_int64() : static_cast<std::int64_t>(p->get_uint64()));
    }
  }

  std::string status_qos;
  auto status = objectField(root, "status", "");
  if (!status)
    return status.error();
  if (*status != nullptr) {
    auto phase = stringField(**status, "phase", "status");
    if (!phase)
      return phase.error();
    out.phase = phaseByName(*phase);
    auto qos = stringField(**status, "qosClass", "status");
    if (!qos)
      return qos.error();
    status_qos = std::move(*qos);
  }

  // status.qosClass is set by the API server on create; computing it is the fallback for
  // objects that never went through one (tests, a bare list).
  apis::KubeQoS kube_qos = apis::KubeQoS::kBestEffort;
  if (status_qos == "Guaranteed" || status_qos == "Burstable" || status_qos == "BestEffort") {
    kube_qos = apis::kubeQoSFromStatus(status_qos, {});
  } else {
    std::vector<apis::ContainerResources> all;
    all.reserve(regular.size() + init.size());
    for (const auto& c : regular)
      all.push_back(c.resources);
    for (const auto& c : init)
      all.push_back(c.resources);
    kube_qos = apis::computeKubeQoS(all);
  }
  out.qos = apis::podQoSClassWithDefault(labels, kube_qos);
  out.priority = apis::podPriorityClassWithDefault(labels, priority, kube_qos);
  out.requests = effectiveRequests(regular, init, pod_level, overhead);
  return out;
}

}  // namespace koord::roles::manager::noderesource
