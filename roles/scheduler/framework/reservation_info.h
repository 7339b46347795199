// A Reservation as the scheduler holds it: the object, its stand-in pod for the queue, and once
// it is Available the room it keeps on its node and what its owner pods there take of it.
#pragma once

#include <boost/json/fwd.hpp>

#include <memory>
#include <string>
#include <vector>

#include "koord/apis/reservation.h"
#include "koord/kube/error.h"
#include "pod_info.h"
#include "resource.h"

namespace koord::roles::scheduler {

/// What the scheduler's Reservation informer keeps: the projected object and the pod built from
/// its template (requests, affinity, tolerations, schedulerName, priority), named and UID'd as
/// the Reservation, so that the queue, the filters and the scores treat it as any pod.
struct ReservationState {
  std::shared_ptr<const apis::Reservation> object;
  std::shared_ptr<const PodInfo> reserve_pod;
};

/// Projects a Reservation with its reserve pod; errors name the field ("spec.template.spec...").
kube::Expected<ReservationState> decodeReservationState(const boost::json::value& v);

/// The reserve pod for `r`: its template as a pod named and UID'd as the Reservation.
kube::Expected<PodInfo> reservePodOf(const apis::Reservation& r);

/// An Available reservation on its node.
struct ReservationInfo {
  std::shared_ptr<const apis::Reservation> object;
  std::string name;
  std::string uid;
  std::string node_name;
  /// The room it keeps: status.allocatable, or the reserve pod's requests while the status
  /// does not say.
  Resource allocatable;
  /// Taken by the owner pods on the node (those whose reservation-allocated names this UID).
  Resource allocated;
  /// Those owner pods' UIDs.
  std::vector<std::string> owner_uids;

  /// allocatable - allocated per resource the reservation keeps, never below zero: the part
  /// of the node no other pod may use.
  Resource remaining() const;
  /// allocated limited to the resources the reservation keeps: what status.allocated lists, as
  /// Koordinator masks it.
  Resource allocatedKept() const;
};

/// The ReservationInfo for an Available reservation (nothing allocated yet); null for one that
/// is not Available on a node.
std::shared_ptr<ReservationInfo> reservationInfoOf(const ReservationState& state);

}  // namespace koord::roles::scheduler
