// /validate-reservation (koord's own; Koordinator has no validating webhook for Reservations):
// refuses a Reservation no pod could ever use, naming the field, before the scheduler finds it.
#pragma once

#include <boost/json/object.hpp>

#include <string>
#include <vector>

#include "koord/kube/error.h"
#include "webhook/admission_review.h"

namespace koord::manager::webhook {

/// Every rule `reservation` breaks, each as Kubernetes' field.Error ("spec.owners: Required
/// value: ..."); empty when it may be stored. `old` is given on UPDATE: then an unchanged spec is
/// not judged again, and a scheduled reservation (old status.nodeName set) keeps its
/// spec.template, owners, allocateOnce and allocatePolicy. An error: the object could not be
/// decoded (apis::decodeReservation's message, naming the field).
kube::Expected<std::vector<std::string>> validateReservation(const boost::json::object& reservation,
                                                             const boost::json::object* old);

/// The /validate-reservation handler: CREATE and UPDATE of reservations are judged, a refusal
/// answered with code 400 and the aggregate message (as Koordinator's validating webhooks
/// answer); DELETE and the status subresource are allowed untouched.
Handler reservationValidatingHandler();

}  // namespace koord::manager::webhook
