// The scheduling.koordinator.sh/v1alpha1 PodMigrationJob (one pod to move off its node) projected
// once from JSON, and the JSON the MigrationController writes: status, new jobs, Reservations.
#pragma once

#include <boost/json/fwd.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "koord/apis/reservation.h"
#include "koord/kube/error.h"
#include "koord/kube/labels.h"

namespace koord::apis {

// Group and version are the Reservation's (kReservationGroup, kReservationVersion).
inline constexpr std::string_view kPodMigrationJobResource = "podmigrationjobs";
inline constexpr std::string_view kPodMigrationJobKind = "PodMigrationJob";

/// The Evict plugin's trigger and reason, kept on the job for Events and metrics.
inline constexpr std::string_view kAnnotationEvictReason = "koordinator.sh/evict-reason";
inline constexpr std::string_view kAnnotationEvictTrigger = "koordinator.sh/evict-trigger";
/// On a pod or a job: the eviction policy (Eviction, Delete, SoftEviction) for this one.
inline constexpr std::string_view kLabelEvictPolicy = "koordinator.sh/evict-policy";
/// Set to "true" on a job the arbitrator let start.
inline constexpr std::string_view kAnnotationPassedArbitration =
    "descheduler.koordinator.sh/passed-arbitration";
/// What the Reservations the controller creates are labelled with, and its value.
inline constexpr std::string_view kLabelCreatedBy = "app.kubernetes.io/created-by";
inline constexpr std::string_view kMigrationCreator = "koord-descheduler";

/// Bound on each list of a job (conditions, preempted pods and their Reservations): a job is
/// about one pod, so real ones hold a handful.
inline constexpr std::size_t kMaxPodMigrationJobListItems = 1024;

enum class PodMigrationJobMode { kReservationFirst, kEvictDirectly };
/// An empty phase reads as kPending (a job no controller has looked at yet).
enum class PodMigrationJobPhase { kPending, kRunning, kSucceeded, kFailed, kAborted };

inline constexpr std::string_view kPodMigrationJobConditionReservationCreated =
    "ReservationCreated";
inline constexpr std::string_view kPodMigrationJobConditionReservationScheduled =
    "ReservationScheduled";
inline constexpr std::string_view kPodMigrationJobConditionPreemption = "Preemption";
inline constexpr std::string_view kPodMigrationJobConditionEviction = "Eviction";
inline constexpr std::string_view kPodMigrationJobConditionPodScheduled = "PodScheduled";
inline constexpr std::string_view kPodMigrationJobConditionPodBoundReservation =
    "PodBoundReservation";
inline constexpr std::string_view kPodMigrationJobConditionBoundPodReady = "BoundPodReady";
inline constexpr std::string_view kPodMigrationJobConditionReservationBound = "ReservationBound";

inline constexpr std::string_view kPodMigrationJobReasonTimeout = "Timeout";
inline constexpr std::string_view kPodMigrationJobReasonFailedCreateReservation =
    "FailedCreateReservation";
inline constexpr std::string_view kPodMigrationJobReasonReservationExpired = "ReservationExpired";
inline constexpr std::string_view kPodMigrationJobReasonUnschedulable = "Unschedulable";
inline constexpr std::string_view kPodMigrationJobReasonForbiddenMigratePod = "ForbiddenMigratePod";
inline constexpr std::string_view kPodMigrationJobReasonMissingPod = "MissingPod";
inline constexpr std::string_view kPodMigrationJobReasonMissingReservation = "MissingReservation";
inline constexpr std::string_view kPodMigrationJobReasonPreempting = "Preempting";
inline constexpr std::string_view kPodMigrationJobReasonPreemptComplete = "PreemptComplete";
inline constexpr std::string_view kPodMigrationJobReasonEvicting = "Evicting";
inline constexpr std::string_view kPodMigrationJobReasonFailedEvict = "FailedEvict";
inline constexpr std::string_view kPodMigrationJobReasonEvictComplete = "EvictComplete";
inline constexpr std::string_view kPodMigrationJobReasonWaitForPodBindReservation =
    "WaitForPodBindReservation";
inline constexpr std::string_view kPodMigrationJobReasonWaitForBoundPodReady =
    "WaitForBoundPodReady";

/// metav1.DeleteOptions, as a job's spec.deleteOptions and the controller's
/// defaultDeleteOptions carry it; unset members stay unset on the wire.
struct DeleteOptions {
  std::optional<std::int64_t> grace_period_seconds;
  /// preconditions.uid and .resourceVersion ("" when unset).
  std::string precondition_uid;
  std::string precondition_resource_version;
  std::optional<bool> orphan_dependents;
  /// "Orphan", "Background" or "Foreground"; "" when unset.
  std::string propagation_policy;
  std::vector<std::string> dry_run;

  friend bool operator==(const DeleteOptions&, const DeleteOptions&) = default;
};

using PodMigrationJobCondition = StatusCondition;

/// status.preemptedPodsReservation[] (singular on the wire, as Koordinator spells it).
struct PreemptedPodReservation {
  std::string namespace_;
  std::string name;
  std::string node_name;
  std::string phase;
  std::optional<ObjectReference> preempted_pod_ref;
  std::vector<ObjectReference> pods_ref;

  friend bool operator==(const PreemptedPodReservation&, const PreemptedPodReservation&) = default;
};

struct PodMigrationJobStatus {
  PodMigrationJobPhase phase = PodMigrationJobPhase::kPending;
  /// The step the job is at ("ReservationCreated", "Complete").
  std::string status;
  std::string reason;
  std::string message;
  std::vector<PodMigrationJobCondition> conditions;
  std::string node_name;
  /// The pod that took the Reservation.
  std::optional<ObjectReference> pod_ref;
  std::vector<ObjectReference> preempted_pods_ref;
  std::vector<PreemptedPodReservation> preempted_pods_reservations;

  friend bool operator==(const PodMigrationJobStatus&, const PodMigrationJobStatus&) = default;
};

struct PodMigrationJob {
  std::string name;
  std::string uid;
  std::string resource_version;
  kube::Labels labels;
  kube::Labels annotations;
  std::chrono::system_clock::time_point creation_timestamp{};
  bool terminating = false;  // metadata.deletionTimestamp set

  // spec
  bool paused = false;
  std::optional<std::chrono::nanoseconds> ttl;
  /// nullopt for "": the controller's defaultJobMode applies.
  std::optional<PodMigrationJobMode> mode;
  /// spec.podRef (required by the CRD; nullopt only in hand-made input).
  std::optional<ObjectReference> pod_ref;
  /// spec.reservationOptions: present at all, and its three members.
  bool has_reservation_options = false;
  std::optional<ObjectReference> reservation_ref;
  /// reservationOptions.template as written (a Reservation's metadata and spec); null without.
  std::shared_ptr<const boost::json::value> reservation_template;
  /// reservationOptions.preemptionOptions is present (it has no members yet).
  bool preemption_allowed = false;
  std::optional<DeleteOptions> delete_options;

  PodMigrationJobStatus status;

  /// Pending or Running: the controller still works on it.
  bool active() const {
    return status.phase == PodMigrationJobPhase::kPending ||
           status.phase == PodMigrationJobPhase::kRunning;
  }
  /// The mode this job runs in: its own, else the controller's default.
  PodMigrationJobMode effectiveMode(PodMigrationJobMode default_mode) const {
    return mode.value_or(default_mode);
  }
  bool passedArbitration() const;
  /// A condition of `type`, nullptr without one.
  const PodMigrationJobCondition* condition(std::string_view type) const;
};

/// Projects a PodMigrationJob. Unknown fields are ignored and JSON null reads as absent; a field
/// of the wrong type, a bad duration or time, or a mode or phase Koordinator does not define is an
/// error naming it ("spec.podRef.uid: expected string, got number"). Lists are bounded by
/// kMaxPodMigrationJobListItems.
kube::Expected<PodMigrationJob> decodePodMigrationJob(const boost::json::value& v);
/// metav1.DeleteOptions at `path` (for the controller's args too).
kube::Expected<DeleteOptions> decodeDeleteOptions(const boost::json::value& v,
                                                  std::string_view path);

std::string_view toString(PodMigrationJobMode mode);
std::string_view toString(PodMigrationJobPhase phase);
/// The spellings above; nullopt for anything else ("" included).
std::optional<PodMigrationJobMode> podMigrationJobModeByName(std::string_view name);

boost::json::value toJson(const ObjectReference& ref);
boost::json::value toJson(const DeleteOptions& options);

/// A JSON merge patch for the status subresource that leaves status exactly `status`: members
/// that are empty are sent as null so that what an earlier step wrote is removed, as
/// Koordinator's full status update does. A non-empty `resource_version` is sent too, making
/// the patch fail with a conflict when the job changed meanwhile.
boost::json::value podMigrationJobStatusPatch(const PodMigrationJobStatus& status,
                                              std::string_view resource_version = {});

/// What an Evict plugin's eviction turns into (Koordinator's CreatePodMigrationJob).
struct NewPodMigrationJob {
  /// A fresh UUID, as Koordinator names jobs.
  std::string name;
  std::string pod_namespace;
  std::string pod_name;
  std::string pod_uid;
  PodMigrationJobMode mode = PodMigrationJobMode::kReservationFirst;
  /// Sent unless nullopt (the controller's defaultJobTTL, or the caller's timeout).
  std::optional<std::chrono::nanoseconds> ttl;
  std::optional<DeleteOptions> delete_options;
  /// The Evict plugin's name and its reason: the evict-trigger and evict-reason annotations.
  std::string trigger;
  std::string reason;
  /// Extra labels and annotations the caller's context adds (they win over the two above).
  kube::Labels labels;
  kube::Labels annotations;
};
/// The object to create. No status: the API server drops it on create (status is a
/// subresource), and an empty phase reads as Pending.
boost::json::value newPodMigrationJobBody(const NewPodMigrationJob& job);

/// Inputs of the Reservation a ReservationFirst job creates (Koordinator's
/// CreateOrUpdateReservationOptions and CreateReservation).
struct MigrationReservationInput {
  const PodMigrationJob* job = nullptr;
  /// The pod as the API server returned it.
  const boost::json::value* pod = nullptr;
  /// Written as the reservation-order label (milliseconds since the epoch): the scheduler
  /// prefers older reservations.
  std::chrono::system_clock::time_point now{};
  /// The DisablePVCReservation gate: leave out the pod's PVC and ephemeral volumes.
  bool drop_pvc_volumes = false;
};
/// The Reservation to create: the job's template when it has one, completed from the pod where
/// it leaves a part out. Its name is the template's, else the job's UID; spec.template is the
/// pod's metadata (name, namespace, labels, annotations, ownerReferences) and spec without
/// nodeName, with a required node affinity term that keeps it off the pod's current node;
/// owners are the pod itself when it is pending and unschedulable, else its controller;
/// allocateOnce is true; the job's ttl is the Reservation's when the template sets neither ttl
/// nor expires; labels created-by=koord-descheduler and reservation-order=now. An error names
/// the bad field of the pod or template, or says the pod has no owner to reserve for.
kube::Expected<boost::json::value> migrationReservationBody(const MigrationReservationInput& in);

/// spec.reservationOptions.reservationRef for a created Reservation: kind Reservation and,
/// as Koordinator writes it, apiVersion "v1alpha1" (the version alone).
ObjectReference reservationRefFor(std::string_view name, std::string_view uid);

}  // namespace koord::apis
