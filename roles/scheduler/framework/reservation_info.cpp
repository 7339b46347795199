#include "reservation_info.h"

#include <boost/json.hpp>

#include <algorithm>

namespace koord::roles::scheduler {

namespace json = boost::json;

namespace {

// Koordinator's reserve pods live in the template's namespace, else the default one (the
// namespace InterPodAffinity and PodTopologySpread count them in).
constexpr std::string_view kReservePodNamespace = "default";

// The template's spec.nodeName pins the reservation to that node; on a pod it would mean
// "bound", so it becomes the required node affinity NodeName would have enforced.
void pinToNode(PodInfo& pod, const std::string& node) {
  kube::NodeSelectorRequirement field{
      std::string(kube::kNodeNameField), kube::NodeSelectorOperator::kIn, {node}};
  if (!pod.node_affinity)
    pod.node_affinity.emplace();
  auto& required = pod.node_affinity->required;
  if (!required || required->node_selector_terms.empty()) {
    required.emplace();
    required->node_selector_terms.push_back({{}, {field}});
    return;
  }
  for (auto& term : required->node_selector_terms)
    term.match_fields.push_back(field);
}

void mergeInto(json::object& meta, std::string_view field, const kube::Labels& values) {
  if (values.empty())
    return;
  json::value& slot = meta[field];
  if (!slot.is_object())
    slot = json::object();
  json::object& out = slot.get_object();
  for (const auto& [key, value] : values)
    out[key] = value;
}

}  // namespace

kube::Expected<PodInfo> reservePodOf(const apis::Reservation& r) {
  json::object meta;
  json::object spec;
  if (r.pod_template != nullptr) {
    if (const json::object* t = r.pod_template->if_object()) {
      if (const json::value* m = t->if_contains("metadata"); m != nullptr && m->is_object())
        meta = m->get_object();
      if (const json::value* s = t->if_contains("spec"); s != nullptr && s->is_object())
        spec = s->get_object();
    }
  }
  meta["name"] = r.name;
  meta["uid"] = r.uid;
  // Koordinator's NewReservePod: the Reservation's own labels and annotations override the
  // template's (its resource-status and device-allocated then read as the reserve pod's).
  mergeInto(meta, "labels", r.labels);
  mergeInto(meta, "annotations", r.annotations);
  const json::value* ns = meta.if_contains("namespace");
  if (ns == nullptr || !ns->is_string() || ns->get_string().empty())
    meta["namespace"] = kReservePodNamespace;
  meta.erase("deletionTimestamp");
  meta.erase("resourceVersion");
  json::object pod;
  pod["metadata"] = std::move(meta);
  pod["spec"] = std::move(spec);
  auto decoded = decodePodInfo(json::value(std::move(pod)));
  if (!decoded)
    return kube::Error("spec.template: " + decoded.error().message, decoded.error().code);
  PodInfo& p = *decoded;
  p.reserve_pod = true;
  p.creation_timestamp = r.creation_timestamp;
  p.terminating = r.terminating;
  if (!p.node_name.empty()) {
    pinToNode(p, p.node_name);
    p.node_name.clear();
  }
  // A reservation is never placed into another reservation.
  p.reservation_name.clear();
  p.reservation_uid.clear();
  p.reservation_affinity.reset();
  p.reservation_affinity_error.clear();
  return std::move(*decoded);
}

kube::Expected<ReservationState> decodeReservationState(const boost::json::value& v) {
  auto r = apis::decodeReservation(v);
  if (!r)
    return r.error();
  auto pod = reservePodOf(*r);
  if (!pod)
    return pod.error();
  ReservationState state;
  state.object = std::make_shared<const apis::Reservation>(std::move(*r));
  state.reserve_pod = std::make_shared<const PodInfo>(std::move(*pod));
  return state;
}

Resource ReservationInfo::remaining() const {
  auto left = [](std::int64_t total, std::int64_t used) {
    return std::max<std::int64_t>(0, total - used);
  };
  Resource out;
  out.milli_cpu = left(allocatable.milli_cpu, allocated.milli_cpu);
  out.memory = left(allocatable.memory, allocated.memory);
  out.ephemeral_storage = left(allocatable.ephemeral_storage, allocated.ephemeral_storage);
  for (const auto& [name, value] : allocatable.scalar)
    out.setScalar(name, left(value, allocated.scalarValue(name)));
  return out;
}

Resource ReservationInfo::allocatedKept() const {
  Resource kept;
  kept.milli_cpu = allocatable.milli_cpu > 0 ? allocated.milli_cpu : 0;
  kept.memory = allocatable.memory > 0 ? allocated.memory : 0;
  kept.ephemeral_storage = allocatable.ephemeral_storage > 0 ? allocated.ephemeral_storage : 0;
  for (const auto& [name, value] : allocatable.scalar) {
    if (value > 0)
      kept.setScalar(name, allocated.scalarValue(name));
  }
  return kept;
}

std::shared_ptr<ReservationInfo> reservationInfoOf(const ReservationState& state) {
  if (!state.object || !state.object->available())
    return nullptr;
  auto info = std::make_shared<ReservationInfo>();
  info->object = state.object;
  info->name = state.object->name;
  info->uid = state.object->uid;
  info->node_name = state.object->node_name;
  info->allocatable = state.object->allocatable.empty()
                          ? state.reserve_pod->requests
                          : Resource::fromList(state.object->allocatable);
  info->allocatable.allowed_pod_number = 0;
  return info;
}

}  // namespace koord::roles::scheduler
