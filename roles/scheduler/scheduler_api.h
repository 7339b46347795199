// What the scheduling loop needs from the cluster beyond plugins' ClusterView: the pod's current
// version (to requeue or drop it after a failure) and where outcomes are reported.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "framework/framework_handle.h"
#include "framework/reservation_info.h"

namespace koord::roles::scheduler {

/// v1.PodReasonUnschedulable and kube-scheduler's SchedulerError: the PodScheduled=False
/// condition's reason.
inline constexpr std::string_view kReasonUnschedulable = "Unschedulable";
inline constexpr std::string_view kReasonSchedulerError = "SchedulerError";

class SchedulerApi : public ClusterView {
 public:
  /// The pod as the informer has it now; null once it is gone.
  virtual std::shared_ptr<const PodInfo> currentPod(const std::string& key) const = 0;
  /// A Normal "Scheduled" Event from the profile's scheduler.
  virtual void reportScheduled(const PodInfo& pod, const std::string& node,
                               const std::string& profile) = 0;
  /// A Warning "FailedScheduling" Event, and the PodScheduled=False condition with `reason` and
  /// `message` (plus status.nominatedNodeName when preemption nominated a node), written only
  /// when they differ from what was last written for the pod.
  virtual void reportFailure(const PodInfo& pod, const std::string& profile,
                             std::string_view reason, const std::string& message,
                             const std::string& nominated_node) = 0;

  /// The pod's object as the API server has it now (a GET), which the scheduler extenders are
  /// sent. Blocks the calling thread: only for the scheduling thread, never the reactor's. The
  /// default is a scheduler without an API client: an error.
  virtual kube::Expected<boost::json::value> getPod(const PodInfo& pod) const;

  // Reservations. The defaults are a scheduler without them (no informer, no API).
  /// The Reservation as the informer has it now; null once it is gone.
  virtual std::shared_ptr<const ReservationState> currentReservation(
      const std::string& /*name*/) const {
    return nullptr;
  }
  /// Every Reservation the informer holds (the lifecycle controller's walk).
  virtual std::vector<std::shared_ptr<const ReservationState>> reservations() const { return {}; }
  /// A JSON merge patch for reservations/{name}/status with the UID as precondition; `done`
  /// runs on the reactor thread.
  virtual void patchReservationStatus(const apis::Reservation& r, boost::json::value patch,
                                      ApiCallback done);
  /// A JSON merge patch for the Reservation itself (its annotations) with the UID as
  /// precondition; `done` runs on the reactor thread.
  virtual void patchReservation(const apis::Reservation& r, boost::json::value patch,
                                ApiCallback done);
  /// Deletes the Reservation (UID as precondition); a 404 is success.
  virtual void deleteReservation(const apis::Reservation& r, ApiCallback done);
  /// An Event on the Reservation from `component` (the profile's schedulerName).
  virtual void reservationEvent(const apis::Reservation& /*r*/, const std::string& /*component*/,
                                bool /*warning*/, std::string_view /*reason*/,
                                const std::string& /*message*/) {}
};

}  // namespace koord::roles::scheduler
