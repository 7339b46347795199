// The status writes the scheduler makes to a Reservation (binding it, recording why it cannot be
// placed, its owners, its end), as JSON merge patches for reservations/{name}/status.
#pragma once

#include <boost/json/fwd.hpp>

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "framework/reservation_info.h"
#include "framework/resource.h"

namespace koord::roles::scheduler::reservation {

using TimePoint = std::chrono::system_clock::time_point;

/// A Resource as a ResourceList (cpu in millicores as "500m", the rest as integers), the
/// entries with a zero value left out.
boost::json::object resourceListJson(const Resource& r);

/// Bound: phase Available on `node`, allocatable the reserve pod's requests, conditions
/// Scheduled=True (Scheduled) and Ready=True (Available).
boost::json::value availablePatch(const ReservationState& r, const std::string& node,
                                  TimePoint now);
/// Not placed this time: the Scheduled=False condition (Unschedulable) with the reason; the
/// phase stays Pending.
boost::json::value unschedulablePatch(const apis::Reservation& r, const std::string& message,
                                      TimePoint now);
/// Finished: phase Failed or Succeeded, Ready=False with `reason` (Expired, Succeeded, ...).
boost::json::value finishedPatch(const apis::Reservation& r, apis::ReservationPhase phase,
                                 std::string_view reason, const std::string& message,
                                 TimePoint now);
/// One owner pod as status.currentOwners lists it.
struct OwnerRef {
  std::string namespace_;
  std::string name;
  std::string uid;
};
/// status.allocated and status.currentOwners as the cache counts them.
boost::json::value ownersPatch(const Resource& allocated, const std::vector<OwnerRef>& owners);

}  // namespace koord::roles::scheduler::reservation
