// The reservation annotations: reservation-allocated and reservation-affinity on pods (and
// which reservations an affinity accepts), node.koordinator.sh/reservation on nodes.
#include "koord/apis/reservation.h"

#include <boost/json.hpp>

#include <utility>

#include <fmt/format.h>

#include "koord/apis/extension.h"
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

constexpr std::string_view kTaintNodeUnschedulable = "node.kubernetes.io/unschedulable";

// The annotation's fields are decoded with paths relative to its value ("tolerations[0]");
// this names the annotation in front of them.
kube::Error underKey(std::string_view key, const kube::Error& e) {
  return makeKubeError(fmt::format("{}: {}", key, e.message));
}

// The annotation `key` as JSON: nullopt when absent, null for "" (Koordinator reads an empty
// value as no value); an error naming the key when too long or not JSON.
Expected<std::optional<json::value>> annotationJson(const kube::Labels& annotations,
                                                    std::string_view key, std::size_t limit,
                                                    json::storage_ptr sp = {}) {
  auto it = annotations.find(key);
  if (it == annotations.end())
    return std::optional<json::value>();
  if (it->second.empty())
    return std::optional<json::value>(nullptr);
  if (auto size = checkValueSize(key, it->second, limit); !size)
    return size.error();
  boost::system::error_code ec;
  json::value v = json::parse(it->second, ec, std::move(sp));
  if (ec)
    return makeKubeError(fmt::format("{}: not JSON: {}", key, ec.message()));
  return std::optional<json::value>(std::move(v));
}

// `v` through decode(object), which must be an object; errors are named under the key.
template <typename T, typename Fn>
Expected<std::optional<T>> objectUnder(std::string_view key, const json::value& v, Fn&& decode) {
  if (!v.is_object())
    return typeError(key, "object", v);
  Expected<T> decoded = decode(v.get_object());
  if (!decoded)
    return underKey(key, decoded.error());
  return std::optional<T>(std::move(*decoded));
}

// kube::decodeNodeSelector reads "nodeSelectorTerms"; the affinity calls its list
// "reservationSelectorTerms", so the terms are handed over under the selector's name and the
// error's path is put back.
Expected<kube::NodeSelector> reservationSelector(const json::object& required,
                                                 std::string_view path) {
  auto terms =
      detail::boundedArray(required, "reservationSelectorTerms", path, kMaxReservationListItems);
  if (!terms)
    return terms.error();
  if (*terms == nullptr)
    return kube::NodeSelector{};
  const json::value as_node_selector(json::object{{"nodeSelectorTerms", **terms}});
  auto decoded = kube::decodeNodeSelector(as_node_selector, path);
  if (!decoded) {
    std::string message = decoded.error().message;
    const std::string wrong = childPath(path, "nodeSelectorTerms");
    if (message.starts_with(wrong))
      message.replace(0, wrong.size(), childPath(path, "reservationSelectorTerms"));
    return makeKubeError(std::move(message));
  }
  return decoded;
}

// What Koordinator's NewNodeSelector refuses: matchExpressions that are no label selector, and
// matchFields other than In/NotIn with exactly one value.
Expected<void> checkTerms(const kube::NodeSelector& selector, std::string_view path) {
  const std::string terms_path = childPath(path, "reservationSelectorTerms");
  for (std::size_t i = 0; i < selector.node_selector_terms.size(); ++i) {
    const kube::NodeSelectorTerm& term = selector.node_selector_terms[i];
    const std::string term_path = indexPath(terms_path, i);
    if (!term.match_expressions.empty()) {
      if (auto s = kube::nodeSelectorRequirementsAsSelector(term.match_expressions); !s)
        return makeKubeError(fmt::format("{}.{}", term_path, s.error().message));
    }
    for (std::size_t j = 0; j < term.match_fields.size(); ++j) {
      const kube::NodeSelectorRequirement& f = term.match_fields[j];
      const std::string field_path = indexPath(childPath(term_path, "matchFields"), j);
      if (f.op != kube::NodeSelectorOperator::kIn && f.op != kube::NodeSelectorOperator::kNotIn) {
        return makeKubeError(fmt::format("{}.operator: \"{}\" is not supported for fields",
                                         field_path, kube::toString(f.op)));
      }
      if (f.values.size() != 1) {
        return makeKubeError(
            fmt::format("{}.values: must have one element, has {}", field_path, f.values.size()));
      }
    }
  }
  return {};
}

Expected<ReservationAffinity> affinityOf(const json::object& o) {
  ReservationAffinity out;
  auto name = stringField(o, "name", "");
  if (!name)
    return name.error();
  out.name = std::move(*name);
  if (const json::value* selector = field(o, "reservationSelector")) {
    auto decoded = kube::decodeStringMap(*selector, "reservationSelector");
    if (!decoded)
      return decoded.error();
    out.reservation_selector = std::move(*decoded);
  }
  constexpr std::string_view kRequired = "requiredDuringSchedulingIgnoredDuringExecution";
  auto required = objectField(o, kRequired, "");
  if (!required)
    return required.error();
  if (*required != nullptr) {
    auto selector = reservationSelector(**required, kRequired);
    if (!selector)
      return selector.error();
    if (auto ok = checkTerms(*selector, kRequired); !ok)
      return ok.error();
    out.required = std::move(*selector);
  }
  if (auto ok = detail::decodeBoundedList(o, "tolerations", "", kMaxReservationListItems,
                                          kube::decodeTolerations, out.tolerations);
      !ok) {
    return ok.error();
  }
  return out;
}

bool accepts(const ReservationAffinity& a, const Reservation& r, const kube::Labels& labels) {
  if (!a.name.empty())
    return a.name == r.name;
  for (const auto& [key, value] : a.reservation_selector) {
    auto it = labels.find(key);
    if (it == labels.end() || it->second != value)
      return false;
  }
  if (a.required && !a.required->matches(labels, r.name))
    return false;
  return kube::findUntoleratedTaint(r.taints, a.tolerations) == nullptr;
}

Expected<ReservationAllocated> allocatedOf(const json::object& o) {
  ReservationAllocated out;
  if (auto ok = detail::readStrings(o, "", {{"name", &out.name}, {"uid", &out.uid}}); !ok)
    return ok.error();
  return out;
}

Expected<NodeReservation> nodeReservationOf(const json::object& o) {
  NodeReservation out;
  if (const json::value* resources = field(o, "resources")) {
    auto decoded = kube::decodeResourceList(*resources, "resources");
    if (!decoded)
      return decoded.error();
    // A negative amount would grow the node's allocatable past what the kubelet reports.
    for (const auto& [name, q] : *decoded) {
      if (q.sign() < 0)
        return makeKubeError(
            fmt::format("resources[{}]: must be greater than or equal to 0", name));
    }
    out.resources = std::move(*decoded);
  }
  auto cpus = stringField(o, "reservedCPUs", "");
  if (!cpus)
    return cpus.error();
  if (!cpus->empty()) {
    auto ids = cgroup::parseCpuList(*cpus);
    if (!ids)
      return makeKubeError(fmt::format("reservedCPUs: {}", ids.error().message));
    out.reserved_cpu_ids = std::move(*ids);
  }
  out.reserved_cpus = std::move(*cpus);
  auto policy = stringField(o, "applyPolicy", "");
  if (!policy)
    return policy.error();
  if (policy->empty() || *policy == "Default") {
    out.apply_policy = NodeReservationApplyPolicy::kDefault;
  } else if (*policy == "ReservedCPUsOnly") {
    out.apply_policy = NodeReservationApplyPolicy::kReservedCPUsOnly;
  } else {
    return makeKubeError(
        fmt::format("applyPolicy: unsupported value \"{}\": supported values: \"Default\", "
                    "\"ReservedCPUsOnly\"",
                    *policy));
  }
  return out;
}

}  // namespace

kube::Expected<std::optional<ReservationAllocated>> reservationAllocated(
    const kube::Labels& annotations) {
  // A name (at most 253 bytes) and a UID: far below the small-value bound. Read for every pod
  // the scheduler assumes into a reservation, so the parse works in a buffer on the stack.
  unsigned char buffer[2048];
  json::monotonic_resource memory(buffer, sizeof buffer);
  auto v = annotationJson(annotations, kAnnotationReservationAllocated,
                          kMaxSmallAnnotationValueBytes, &memory);
  if (!v)
    return v.error();
  if (!*v)
    return std::optional<ReservationAllocated>();
  return objectUnder<ReservationAllocated>(kAnnotationReservationAllocated, **v, allocatedOf);
}

std::string reservationAllocatedValue(std::string_view name, std::string_view uid) {
  // Koordinator's struct tags are omitempty: an empty member is left out.
  unsigned char buffer[1024];
  json::monotonic_resource memory(buffer, sizeof buffer);
  json::object o(&memory);
  if (!name.empty())
    o["name"] = name;
  if (!uid.empty())
    o["uid"] = uid;
  return json::serialize(o);
}

kube::Expected<std::optional<ReservationAffinity>> reservationAffinity(
    const kube::Labels& annotations) {
  auto v = annotationJson(annotations, kAnnotationReservationAffinity, kMaxAnnotationValueBytes);
  if (!v)
    return v.error();
  if (!*v)
    return std::optional<ReservationAffinity>();
  // Koordinator skips unmarshalling an empty value, and null leaves the struct as it was: both
  // are an affinity that asks for nothing but a reservation.
  if ((*v)->is_null())
    return std::optional<ReservationAffinity>(ReservationAffinity{});
  return objectUnder<ReservationAffinity>(kAnnotationReservationAffinity, **v, affinityOf);
}

bool ReservationAffinity::matches(const Reservation& r) const {
  return accepts(*this, r, r.labels);
}

bool ReservationAffinity::matches(const Reservation& r, const kube::Labels& node_labels) const {
  if (!name.empty())
    return name == r.name;
  kube::Labels labels = node_labels;
  for (const auto& [key, value] : r.labels)
    labels.insert_or_assign(key, value);
  return accepts(*this, r, labels);
}

bool ReservationAffinity::toleratesUnschedulable() const {
  return kube::tolerationsTolerateTaint(
      tolerations,
      kube::Taint{std::string(kTaintNodeUnschedulable), "", kube::TaintEffect::kNoSchedule});
}

kube::Expected<std::optional<NodeReservation>> nodeReservation(const kube::Labels& annotations) {
  auto v = annotationJson(annotations, kAnnotationNodeReservation, kMaxAnnotationValueBytes);
  if (!v)
    return v.error();
  // json.Unmarshal of null into Koordinator's *NodeReservation leaves it nil.
  if (!*v || (*v)->is_null())
    return std::optional<NodeReservation>();
  return objectUnder<NodeReservation>(kAnnotationNodeReservation, **v, nodeReservationOf);
}

kube::ResourceList NodeReservation::reservedResources() const {
  kube::ResourceList out = resources;
  if (!reserved_cpus.empty()) {
    out.insert_or_assign(
        "cpu", kube::Quantity::fromInt(static_cast<std::int64_t>(reserved_cpu_ids.size())));
  }
  return out;
}

}  // namespace koord::apis
