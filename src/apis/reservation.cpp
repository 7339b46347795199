// decodeReservation (the Reservation JSON -> Reservation projection), its enums' spellings,
// expiry() and the owner matcher. The annotations' parsers are in reservation_annotations.cpp.
#include "koord/apis/reservation.h"

#include <boost/json.hpp>

#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "crd_object.h"
#include "enum_names.h"
#include "koord/apis/input_limits.h"
#include "koord/core/saturating.h"
#include "koord/kube/decode.h"
#include "koord/kube/json_fields.h"
#include "object_fields.h"

namespace koord::apis {

namespace json = boost::json;
using namespace koord::kube::jsonfields;
using kube::Expected;
using kube::makeKubeError;

namespace {

using detail::EnumName;

// An empty phase is a reservation no one has looked at yet: Pending (printed by its name, the
// first entry).
constexpr EnumName<ReservationPhase> kPhases[] = {
    {ReservationPhase::kPending, "Pending"},     {ReservationPhase::kPending, ""},
    {ReservationPhase::kAvailable, "Available"}, {ReservationPhase::kSucceeded, "Succeeded"},
    {ReservationPhase::kWaiting, "Waiting"},     {ReservationPhase::kFailed, "Failed"},
};
constexpr EnumName<ReservationAllocatePolicy> kPolicies[] = {
    {ReservationAllocatePolicy::kDefault, ""},
    {ReservationAllocatePolicy::kAligned, "Aligned"},
    {ReservationAllocatePolicy::kRestricted, "Restricted"},
};

Expected<ReservationControllerReference> controllerReference(const json::object& o,
                                                             std::string_view path) {
  ReservationControllerReference out;
  if (auto ok = detail::readStrings(o, path,
                                    {{"apiVersion", &out.api_version},
                                     {"kind", &out.kind},
                                     {"name", &out.name},
                                     {"uid", &out.uid},
                                     {"namespace", &out.namespace_}});
      !ok) {
    return ok.error();
  }
  auto controller = optionalBoolField(o, "controller", path);
  if (!controller)
    return controller.error();
  out.controller = *controller;
  return out;
}

Expected<ReservationOwner> owner(const json::object& o, std::string_view path) {
  ReservationOwner out;
  auto object =
      detail::optionalObject<ObjectReference>(o, "object", path, detail::decodeObjectReference);
  if (!object)
    return object.error();
  out.object = std::move(*object);
  auto controller = detail::optionalObject<ReservationControllerReference>(o, "controller", path,
                                                                           controllerReference);
  if (!controller)
    return controller.error();
  out.controller = std::move(*controller);
  if (const json::value* selector = field(o, "labelSelector")) {
    const std::string selector_path = childPath(path, "labelSelector");
    auto decoded = kube::decodeLabelSelector(*selector, selector_path);
    if (!decoded)
      return decoded.error();
    // Compiled once here, so that a bad key or value refuses the object rather than every match.
    auto compiled = kube::toSelector(*decoded);
    if (!compiled)
      return makeKubeError(fmt::format("{}: {}", selector_path, compiled.error().message));
    out.label_selector = std::move(*decoded);
    out.selector = std::move(*compiled);
  }
  return out;
}

Expected<kube::ResourceList> resourceListField(const json::object& o, std::string_view name,
                                               std::string_view path) {
  const json::value* v = field(o, name);
  if (v == nullptr)
    return kube::ResourceList();
  return kube::decodeResourceList(*v, childPath(path, name));
}

Expected<void> decodeSpec(const json::object& spec, Reservation& out) {
  constexpr std::string_view kPath = "spec";
  auto tmpl = detail::objectCopy(spec, "template", kPath);
  if (!tmpl)
    return tmpl.error();
  out.pod_template = std::move(*tmpl);
  auto owners =
      detail::objectsOf<ReservationOwner>(spec, "owners", kPath, kMaxReservationOwners, owner);
  if (!owners)
    return owners.error();
  out.owners = std::move(*owners);

  auto ttl = detail::durationField(spec, "ttl", kPath);
  if (!ttl)
    return ttl.error();
  out.ttl = *ttl;
  auto expires = timeField(spec, "expires", kPath);
  if (!expires)
    return expires.error();
  out.expires = *expires;

  auto pre_allocation = boolField(spec, "preAllocation", kPath);
  if (!pre_allocation)
    return pre_allocation.error();
  out.pre_allocation = *pre_allocation;
  auto allocate_once = optionalBoolField(spec, "allocateOnce", kPath);
  if (!allocate_once)
    return allocate_once.error();
  out.allocate_once = allocate_once->value_or(true);
  auto policy = detail::enumField(spec, "allocatePolicy", kPath, kPolicies);
  if (!policy)
    return policy.error();
  out.allocate_policy = policy->value_or(ReservationAllocatePolicy::kDefault);
  auto unschedulable = boolField(spec, "unschedulable", kPath);
  if (!unschedulable)
    return unschedulable.error();
  out.unschedulable = *unschedulable;

  return detail::decodeBoundedList(spec, "taints", kPath, kMaxReservationListItems,
                                   kube::decodeTaints, out.taints);
}

Expected<void> decodeStatus(const json::object& status, Reservation& out) {
  constexpr std::string_view kPath = "status";
  auto phase = detail::enumField(status, "phase", kPath, kPhases);
  if (!phase)
    return phase.error();
  out.phase = phase->value_or(ReservationPhase::kPending);
  auto conditions = detail::objectsOf<ReservationCondition>(
      status, "conditions", kPath, kMaxReservationListItems, detail::decodeCondition);
  if (!conditions)
    return conditions.error();
  out.conditions = std::move(*conditions);
  auto current = detail::objectsOf<ObjectReference>(
      status, "currentOwners", kPath, kMaxReservationListItems, detail::decodeObjectReference);
  if (!current)
    return current.error();
  out.current_owners = std::move(*current);
  auto node = stringField(status, "nodeName", kPath);
  if (!node)
    return node.error();
  out.node_name = std::move(*node);
  auto allocatable = resourceListField(status, "allocatable", kPath);
  if (!allocatable)
    return allocatable.error();
  out.allocatable = std::move(*allocatable);
  auto allocated = resourceListField(status, "allocated", kPath);
  if (!allocated)
    return allocated.error();
  out.allocated = std::move(*allocated);
  return {};
}

bool matchesObject(const ObjectReference& ref, const OwnerMatchPod& pod) {
  // Only pods are owners here, so kind is not compared (as in Koordinator).
  return (ref.uid.empty() || ref.uid == pod.uid) && (ref.name.empty() || ref.name == pod.name) &&
         (ref.namespace_.empty() || ref.namespace_ == pod.namespace_) &&
         (ref.api_version.empty() || ref.api_version == "v1");
}

bool matchesController(const ReservationControllerReference& ref, const OwnerMatchPod& pod) {
  if (!ref.namespace_.empty() && ref.namespace_ != pod.namespace_)
    return false;
  const bool has_controller =
      !pod.controller_kind.empty() || !pod.controller_name.empty() || !pod.controller_uid.empty();
  // Koordinator walks every owner reference; the projection keeps only the controller, whose
  // controller flag is true.
  if (!has_controller || (ref.controller.has_value() && !*ref.controller))
    return false;
  return (ref.uid.empty() || ref.uid == pod.controller_uid) &&
         (ref.name.empty() || ref.name == pod.controller_name) &&
         (ref.kind.empty() || ref.kind == pod.controller_kind) &&
         (ref.api_version.empty() || ref.api_version == pod.controller_api_version);
}

}  // namespace

kube::Expected<Reservation> decodeReservation(const boost::json::value& v) {
  return detail::decodeCrd<Reservation>(v, "Reservation", decodeSpec, decodeStatus);
}

std::optional<std::chrono::system_clock::time_point> Reservation::expiry() const {
  if (ttl && ttl->count() == 0)
    return std::nullopt;
  if (expires && !ttl)
    return expires;
  // Saturated: a ttl of centuries must read as "far away", not wrap into the past.
  const auto by_ttl = saturatingAdd(creation_timestamp, ttl.value_or(kDefaultReservationTTL));
  // Koordinator expires a reservation when either deadline passes.
  return expires ? std::min(*expires, by_ttl) : by_ttl;
}

std::string_view toString(ReservationPhase phase) {
  return detail::nameOf(kPhases, phase);
}

std::string_view toString(ReservationAllocatePolicy policy) {
  return detail::nameOf(kPolicies, policy);
}

bool matchesOwners(const std::vector<ReservationOwner>& owners, const OwnerMatchPod& pod) {
  static const kube::Labels kNoLabels;
  const kube::Labels& labels = pod.labels != nullptr ? *pod.labels : kNoLabels;
  return std::any_of(owners.begin(), owners.end(), [&](const ReservationOwner& o) {
    return (!o.object || matchesObject(*o.object, pod)) &&
           (!o.controller || matchesController(*o.controller, pod)) &&
           (!o.selector || o.selector->matches(labels));
  });
}

}  // namespace koord::apis
