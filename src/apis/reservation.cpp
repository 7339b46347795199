// decodeReservation (the Reservation JSON -> Reservation projection), its enums' spellings,
// expiry() and the owner matcher. The annotations' parsers are in reservation_annotations.cpp.
#include "koord/apis/reservation.h"

#include <boost/json.hpp>

#include <algorithm>
#include <initializer_list>
#include <span>
#include <utility>

#include <fmt/format.h>

#include "koord/apis/input_limits.h"
#include "koord/core/duration.h"
#include "koord/core/saturating.h"
#include "koord/kube/decode.h"
#include "koord/kube/json_fields.h"
#include "koord/kube/object_meta.h"
#include "reservation_json.h"

namespace koord::apis {

namespace json = boost::json;
using namespace koord::kube::jsonfields;
using kube::Expected;
using kube::makeKubeError;

namespace detail {

Expected<const json::array*> boundedArray(const json::object& o, std::string_view name,
                                          std::string_view path, std::size_t limit) {
  const json::value* v = field(o, name);
  if (v == nullptr)
    return static_cast<const json::array*>(nullptr);
  std::string list_path = childPath(path, name);
  if (!v->is_array())
    return typeError(list_path, "array", *v);
  if (v->get_array().size() > limit) {
    return makeKubeError(fmt::format("{}: {} items, more than the {} allowed", list_path,
                                     v->get_array().size(), limit));
  }
  return &v->get_array();
}

Expected<void> readStrings(const json::object& o, std::string_view path,
                           std::initializer_list<StringMember> members) {
  for (const StringMember& m : members) {
    auto s = stringField(o, m.name, path);
    if (!s)
      return s.error();
    *m.out = std::move(*s);
  }
  return {};
}

}  // namespace detail

namespace {

template <typename E>
struct EnumName {
  E value;
  std::string_view name;
};

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

template <typename E>
std::string_view nameOf(std::span<const EnumName<E>> names, E value) {
  for (const auto& n : names) {
    if (n.value == value)
      return n.name;
  }
  return "?";
}

// The string member `name` as one of `names`; the error lists the supported spellings as the
// API server's enum validation does.
template <typename E>
Expected<E> enumField(const json::object& o, std::string_view name, std::string_view path,
                      std::span<const EnumName<E>> names) {
  auto text = stringField(o, name, path);
  if (!text)
    return text.error();
  std::string supported;
  for (const auto& n : names) {
    if (n.name == *text)
      return n.value;
    if (!n.name.empty())
      supported += fmt::format("{}\"{}\"", supported.empty() ? "" : ", ", n.name);
  }
  return makeKubeError(fmt::format("{}: unsupported value \"{}\": supported values: {}",
                                   childPath(path, name), *text, supported));
}

// Each object of the bounded list `name` through decode(object, "path.name[i]").
template <typename T, typename Fn>
Expected<std::vector<T>> objectsOf(const json::object& o, std::string_view name,
                                   std::string_view path, std::size_t limit, Fn&& decode) {
  std::vector<T> out;
  auto items = detail::boundedArray(o, name, path, limit);
  if (!items)
    return items.error();
  if (*items == nullptr)
    return out;
  const std::string list_path = childPath(path, name);
  out.reserve((*items)->size());
  for (std::size_t i = 0; i < (*items)->size(); ++i) {
    const json::value& e = (**items)[i];
    const std::string item_path = indexPath(list_path, i);
    if (!e.is_object())
      return typeError(item_path, "object", e);
    Expected<T> item = decode(e.get_object(), item_path);
    if (!item)
      return item.error();
    out.push_back(std::move(*item));
  }
  return out;
}

Expected<ObjectReference> objectReference(const json::object& o, std::string_view path) {
  ObjectReference out;
  if (auto ok = detail::readStrings(o, path,
                                    {{"apiVersion", &out.api_version},
                                     {"kind", &out.kind},
                                     {"namespace", &out.namespace_},
                                     {"name", &out.name},
                                     {"uid", &out.uid}});
      !ok) {
    return ok.error();
  }
  return out;
}

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

// The object member `name` through decode(object, "path.name"); nullopt when absent or null.
template <typename T, typename Fn>
Expected<std::optional<T>> optionalObject(const json::object& o, std::string_view name,
                                          std::string_view path, Fn&& decode) {
  auto member = objectField(o, name, path);
  if (!member)
    return member.error();
  if (*member == nullptr)
    return std::optional<T>();
  Expected<T> decoded = decode(**member, childPath(path, name));
  if (!decoded)
    return decoded.error();
  return std::optional<T>(std::move(*decoded));
}

Expected<ReservationOwner> owner(const json::object& o, std::string_view path) {
  ReservationOwner out;
  auto object = optionalObject<ObjectReference>(o, "object", path, objectReference);
  if (!object)
    return object.error();
  out.object = std::move(*object);
  auto controller =
      optionalObject<ReservationControllerReference>(o, "controller", path, controllerReference);
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

Expected<ReservationCondition> condition(const json::object& o, std::string_view path) {
  ReservationCondition out;
  if (auto ok = detail::readStrings(o, path,
                                    {{"type", &out.type},
                                     {"status", &out.status},
                                     {"reason", &out.reason},
                                     {"message", &out.message}});
      !ok) {
    return ok.error();
  }
  auto probe = timeField(o, "lastProbeTime", path);
  if (!probe)
    return probe.error();
  out.last_probe_time = *probe;
  auto transition = timeField(o, "lastTransitionTime", path);
  if (!transition)
    return transition.error();
  out.last_transition_time = *transition;
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
  auto tmpl = objectField(spec, "template", kPath);
  if (!tmpl)
    return tmpl.error();
  if (*tmpl != nullptr) {
    // Copied into the default resource: the source may live in a list decoder's arena, which
    // is rewound for the next item.
    out.pod_template =
        std::make_shared<const json::value>(json::object(**tmpl, json::storage_ptr()));
  }
  auto owners = objectsOf<ReservationOwner>(spec, "owners", kPath, kMaxReservationOwners, owner);
  if (!owners)
    return owners.error();
  out.owners = std::move(*owners);

  if (const json::value* ttl = field(spec, "ttl")) {
    if (!ttl->is_string())
      return typeError("spec.ttl", "duration string", *ttl);
    auto parsed = parseGoDuration(ttl->get_string());
    if (!parsed) {
      return makeKubeError(
          fmt::format("spec.ttl: invalid duration \"{}\"", std::string_view(ttl->get_string())));
    }
    out.ttl = *parsed;
  }
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
  auto policy = enumField<ReservationAllocatePolicy>(spec, "allocatePolicy", kPath, kPolicies);
  if (!policy)
    return policy.error();
  out.allocate_policy = *policy;
  auto unschedulable = boolField(spec, "unschedulable", kPath);
  if (!unschedulable)
    return unschedulable.error();
  out.unschedulable = *unschedulable;

  return detail::decodeBoundedList(spec, "taints", kPath, kMaxReservationListItems,
                                   kube::decodeTaints, out.taints);
}

Expected<void> decodeStatus(const json::object& status, Reservation& out) {
  constexpr std::string_view kPath = "status";
  auto phase = enumField<ReservationPhase>(status, "phase", kPath, kPhases);
  if (!phase)
    return phase.error();
  out.phase = *phase;
  auto conditions = objectsOf<ReservationCondition>(status, "conditions", kPath,
                                                    kMaxReservationListItems, condition);
  if (!conditions)
    return conditions.error();
  out.conditions = std::move(*conditions);
  auto current = objectsOf<ObjectReference>(status, "currentOwners", kPath,
                                            kMaxReservationListItems, objectReference);
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
  if (!v.is_object())
    return typeError("Reservation", "object", v);
  const json::object& root = v.get_object();
  Reservation out;

  using F = kube::ObjectMetaFields;
  kube::ObjectMeta meta;
  if (auto ok =
          kube::decodeObjectMeta(root,
                                 {.members = F::kName | F::kUid | F::kResourceVersion | F::kLabels |
                                             F::kCreationTimestamp | F::kDeletionTimestamp},
                                 meta);
      !ok) {
    return ok.error();
  }
  out.name = std::move(meta.name);
  out.uid = std::move(meta.uid);
  out.resource_version = std::move(meta.resource_version);
  out.labels = std::move(meta.labels);
  out.creation_timestamp =
      meta.creation_timestamp.value_or(std::chrono::system_clock::time_point{});
  out.terminating = meta.deletion_timestamp.has_value();

  auto spec = objectField(root, "spec", "");
  if (!spec)
    return spec.error();
  if (*spec != nullptr) {
    if (auto ok = decodeSpec(**spec, out); !ok)
      return ok.error();
  }
  auto status = objectField(root, "status", "");
  if (!status)
    return status.error();
  if (*status != nullptr) {
    if (auto ok = decodeStatus(**status, out); !ok)
      return ok.error();
  }
  return out;
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
  return nameOf<ReservationPhase>(kPhases, phase);
}

std::string_view toString(ReservationAllocatePolicy policy) {
  return nameOf<ReservationAllocatePolicy>(kPolicies, policy);
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
