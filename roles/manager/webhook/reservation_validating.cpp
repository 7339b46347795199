#include "webhook/reservation_validating.h"

#include <boost/json.hpp>

#include <chrono>
#include <initializer_list>
#include <string_view>

#include <fmt/format.h>

#include "koord/apis/reservation.h"
#include "koord/kube/json_fields.h"
#include "webhook/field_errors.h"

namespace koord::manager::webhook {
namespace {

namespace json = boost::json;
using kube::jsonfields::field;

// The member at `path`; nullptr when any step is absent, null or not an object.
const json::value* at(const json::object& o, std::initializer_list<std::string_view> path) {
  const json::object* cur = &o;
  const json::value* v = nullptr;
  for (std::string_view name : path) {
    if (cur == nullptr)
      return nullptr;
    v = field(*cur, name);
    if (v == nullptr)
      return nullptr;
    cur = v->if_object();
  }
  return v;
}

std::string_view stringAt(const json::object& o, std::initializer_list<std::string_view> path) {
  const json::value* v = at(o, path);
  return v != nullptr && v->is_string() ? std::string_view(v->get_string()) : std::string_view();
}

bool sameValue(const json::value* a, const json::value* b) {
  if (a == nullptr || b == nullptr)
    return a == b;
  return *a == *b;
}

// A spec field as the scheduler reads it, the CRD's default standing in for an absent one, so
// that a writer that spells the default out is not taken for one that changed it.
json::value orDefault(const json::value* v, json::value fallback) {
  return v == nullptr ? fallback : *v;
}

// The rules that need the decoded reservation: each refers to a field the scheduler needs in order
// to place the reservation or to let a pod use it.
void checkSpec(const apis::Reservation& r, const json::object& object,
               std::vector<std::string>& errors) {
  if (r.pod_template == nullptr) {
    errors.push_back(required("spec.template", "the pod the reservation holds room for"));
  } else if (!r.pod_template->is_object()) {
    errors.push_back(invalidValue("spec.template", *r.pod_template, "must be a PodTemplateSpec"));
  }
  // Without owners no pod matches (Koordinator's MatchReservationOwners): the room would be held
  // for nobody until it expires.
  if (r.owners.empty())
    errors.push_back(required("spec.owners", "at least one owner, or no pod may use it"));
  for (std::size_t i = 0; i < r.owners.size(); ++i) {
    const apis::ReservationOwner& o = r.owners[i];
    if (!o.object && !o.controller && !o.label_selector) {
      errors.push_back(required(kube::jsonfields::indexPath("spec.owners", i),
                                "one of object, controller or labelSelector"));
    }
  }
  if (r.ttl && *r.ttl < std::chrono::nanoseconds::zero()) {
    errors.push_back(invalid("spec.ttl", stringAt(object, {"spec", "ttl"}),
                             "must not be negative (0 never expires)"));
  }
}

// A scheduled reservation was placed and sized by its template, and its owners already hold
// room under owners, allocateOnce and allocatePolicy: changing them would leave the node's
// accounting describing a reservation that no longer exists. Koordinator does not say; nothing of
// its own changes them after creation.
void checkImmutable(const json::object& now, const json::object& old,
                    std::vector<std::string>& errors) {
  std::string_view node = stringAt(old, {"status", "nodeName"});
  if (node.empty())
    return;
  const std::string why =
      fmt::format("may not change once the reservation is scheduled (on node {:?})", node);
  for (std::string_view name : {"template", "owners"}) {
    if (!sameValue(at(now, {"spec", name}), at(old, {"spec", name})))
      errors.push_back(forbidden(fmt::format("spec.{}", name), why));
  }
  struct Scalar {
    std::string_view name;
    json::value fallback;
  };
  for (const Scalar& s : {Scalar{"allocateOnce", true}, Scalar{"allocatePolicy", ""}}) {
    json::value was = orDefault(at(old, {"spec", s.name}), s.fallback);
    json::value is = orDefault(at(now, {"spec", s.name}), s.fallback);
    if (is != was)
      errors.push_back(invalidValue(fmt::format("spec.{}", s.name), is, why));
  }
}

}  // namespace

kube::Expected<std::vector<std::string>> validateReservation(const json::object& reservation,
                                                             const json::object* old) {
  std::vector<std::string> errors;
  // Metadata-only updates (labels, finalizers on the way to deletion) pass even for a reservation
  // stored before this webhook judged it: it must stay deletable and relabellable.
  if (old != nullptr && sameValue(at(reservation, {"spec"}), at(*old, {"spec"})))
    return errors;
  auto decoded = apis::decodeReservation(json::value(reservation));
  if (!decoded)
    return decoded.error();
  checkSpec(*decoded, reservation, errors);
  if (old != nullptr)
    checkImmutable(reservation, *old, errors);
  return errors;
}

Handler reservationValidatingHandler() {
  Handler h;
  h.resource = "reservations";
  h.kind = "Reservation";
  h.admit = [](const AdmissionRequest& request) {
    if (request.operation != Operation::kCreate && request.operation != Operation::kUpdate)
      return AdmissionResponse::allow();
    const json::object* old = request.operation == Operation::kUpdate && request.old_object
                                  ? &*request.old_object
                                  : nullptr;
    return answerInvalid(validateReservation(request.object, old));
  };
  return h;
}

}  // namespace koord::manager::webhook
