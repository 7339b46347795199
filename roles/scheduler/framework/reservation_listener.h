// Plugins that keep their own view of the reservations holding room (the Reservation plugin's
// owner index) implement this; the scheduler finds them among the built plugins, as
// AssignedPodListener, and calls them from the Reservation informer's events.
#pragma once

#include <memory>
#include <string>

#include "koord/apis/reservation.h"

namespace koord::roles::scheduler {

class ReservationListener {
 public:
  virtual ~ReservationListener() = default;
  /// An Available reservation appeared or changed; it holds room on r->node_name.
  virtual void onReservationAvailable(std::shared_ptr<const apis::Reservation> r) = 0;
  /// The reservation of this UID holds no room any more (finished, deleted, not Available).
  virtual void onReservationGone(const std::string& uid) = 0;
};

}  // namespace koord::roles::scheduler
