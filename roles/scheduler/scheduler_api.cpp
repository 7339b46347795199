#include "scheduler_api.h"

#include <boost/json.hpp>

namespace koord::roles::scheduler {

// Without an API client (the loop's unit tests, the in-process benchmark) a reservation's
// binding fails plainly rather than pretending it happened.
void SchedulerApi::patchReservationStatus(const apis::Reservation& r, boost::json::value /*patch*/,
                                          ApiCallback done) {
  done(kube::makeKubeError("updating the status of reservation " + r.name +
                           ": this scheduler has no API client"));
}

void SchedulerApi::patchReservation(const apis::Reservation& r, boost::json::value /*patch*/,
                                    ApiCallback done) {
  done(
      kube::makeKubeError("updating reservation " + r.name + ": this scheduler has no API client"));
}

kube::Expected<boost::json::value> SchedulerApi::getPod(const PodInfo& pod) const {
  return kube::makeKubeError("getting pod " + pod.key() + ": this scheduler has no API client");
}

void SchedulerApi::deleteReservation(const apis::Reservation& r, ApiCallback done) {
  done(
      kube::makeKubeError("deleting reservation " + r.name + ": this scheduler has no API client"));
}

}  // namespace koord::roles::scheduler
