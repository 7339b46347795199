// The scheduling.koordinator.sh/v1alpha1 Reservation (room the scheduler holds on a node for the
// pods its owners name) and the pod annotations that point at one, projected once from JSON.
#pragma once

#include <boost/json/fwd.hpp>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "koord/kube/error.h"
#include "koord/kube/labels.h"
#include "koord/kube/quantity.h"
#include "koord/kube/scheduling_match.h"

namespace koord::apis {

inline constexpr std::string_view kReservationGroup = "scheduling.koordinator.sh";
inline constexpr std::string_view kReservationVersion = "v1alpha1";
inline constexpr std::string_view kReservationResource = "reservations";
inline constexpr std::string_view kReservationKind = "Reservation";

inline constexpr std::string_view kAnnotationReservationAffinity =
    "scheduling.koordinator.sh/reservation-affinity";
/// A pod labelled "true" never uses a reservation.
inline constexpr std::string_view kLabelReservationIgnored =
    "scheduling.koordinator.sh/reservation-ignored";
/// Among the reservations a pod fits, the lowest order (an integer) is taken first.
inline constexpr std::string_view kLabelReservationOrder =
    "scheduling.koordinator.sh/reservation-order";

/// spec.ttl's default when neither ttl nor expires is set.
inline constexpr std::chrono::hours kDefaultReservationTTL{24};

enum class ReservationPhase { kPending, kAvailable, kSucceeded, kWaiting, kFailed };
/// "" is the Default policy.
enum class ReservationAllocatePolicy { kDefault, kAligned, kRestricted };

inline constexpr std::string_view kReservationConditionScheduled = "Scheduled";
inline constexpr std::string_view kReservationConditionReady = "Ready";
inline constexpr std::string_view kReasonReservationScheduled = "Scheduled";
inline constexpr std::string_view kReasonReservationUnschedulable = "Unschedulable";
inline constexpr std::string_view kReasonReservationAvailable = "Available";
inline constexpr std::string_view kReasonReservationSucceeded = "Succeeded";
inline constexpr std::string_view kReasonReservationExpired = "Expired";

/// corev1.ObjectReference as owners[].object and status.currentOwners[] use it; empty fields
/// match anything.
struct ObjectReference {
  std::string api_version;
  std::string kind;
  std::string namespace_;
  std::string name;
  std::string uid;

  friend bool operator==(const ObjectReference&, const ObjectReference&) = default;
};

/// owners[].controller: a metav1.OwnerReference plus the pods' namespace.
struct ReservationControllerReference {
  std::string api_version;
  std::string kind;
  std::string name;
  std::string uid;
  std::optional<bool> controller;
  std::string namespace_;

  friend bool operator==(const ReservationControllerReference&,
                         const ReservationControllerReference&) = default;
};

/// One owners[] entry: its parts ANDed (each optional); the entries ORed.
struct ReservationOwner {
  std::optional<ObjectReference> object;
  std::optional<ReservationControllerReference> controller;
  /// The labelSelector as written, and compiled.
  std::optional<kube::LabelSelector> label_selector;
  std::optional<kube::Selector> selector;
};

/// A status.conditions[] item, the same in both of the group's CRDs (ReservationCondition,
/// PodMigrationJobCondition).
struct StatusCondition {
  std::string type;
  std::string status;  // "True", "False", "Unknown"
  std::string reason;
  std::string message;
  std::optional<std::chrono::system_clock::time_point> last_probe_time;
  std::optional<std::chrono::system_clock::time_point> last_transition_time;

  friend bool operator==(const StatusCondition&, const StatusCondition&) = default;
};
using ReservationCondition = StatusCondition;

struct Reservation {
  std::string name;
  std::string uid;
  std::string resource_version;
  kube::Labels labels;
  /// metadata.annotations: the scheduler writes the CPUs and devices it reserved here
  /// (resource-status, device-allocated), as Koordinator does.
  kube::Labels annotations;
  std::chrono::system_clock::time_point creation_timestamp{};
  bool terminating = false;  // metadata.deletionTimestamp set

  // spec
  /// spec.template as written (a PodTemplateSpec), for whoever builds the reserve pod from it;
  /// null without one.
  std::shared_ptr<const boost::json::value> pod_template;
  std::vector<ReservationOwner> owners;
  std::optional<std::chrono::nanoseconds> ttl;
  std::optional<std::chrono::system_clock::time_point> expires;
  bool pre_allocation = false;
  /// spec.allocateOnce; true when unset.
  bool allocate_once = true;
  ReservationAllocatePolicy allocate_policy = ReservationAllocatePolicy::kDefault;
  bool unschedulable = false;
  std::vector<kube::Taint> taints;

  // status
  /// status.phase; an empty phase reads as kPending.
  ReservationPhase phase = ReservationPhase::kPending;
  std::vector<ReservationCondition> conditions;
  std::vector<ObjectReference> current_owners;
  std::string node_name;
  kube::ResourceList allocatable;
  kube::ResourceList allocated;

  /// When it expires, as Koordinator's reservation controller decides: never (nullopt) for a
  /// ttl of 0, even with expires set; else expires when set (the earlier of expires and
  /// creation + ttl when both are); else creation + ttl, 24 h when unset (the CRD's default).
  std::optional<std::chrono::system_clock::time_point> expiry() const;
  /// Available with a node: holding room there.
  bool available() const { return phase == ReservationPhase::kAvailable && !node_name.empty(); }
  /// Succeeded or Failed: it holds nothing any more.
  bool finished() const {
    return phase == ReservationPhase::kSucceeded || phase == ReservationPhase::kFailed;
  }
};

/// Projects a Reservation. Unknown fields are ignored and JSON null reads as absent; a field of
/// the wrong type, a bad quantity, time, duration, selector or enum value is an error naming it
/// ("spec.owners[1].labelSelector.matchExpressions[0].operator: ..."). Counts are bounded by
/// input_limits.h.
kube::Expected<Reservation> decodeReservation(const boost::json::value& v);

std::string_view toString(ReservationPhase phase);
std::string_view toString(ReservationAllocatePolicy policy);

/// The scheduling.koordinator.sh/reservation-allocated annotation: {"name", "uid"}.
struct ReservationAllocated {
  std::string name;
  std::string uid;
};
/// nullopt without the annotation; an error (naming the annotation) for one that is not the
/// JSON object Koordinator writes.
kube::Expected<std::optional<ReservationAllocated>> reservationAllocated(
    const kube::Labels& annotations);
/// The annotation's value for a reservation.
std::string reservationAllocatedValue(std::string_view name, std::string_view uid);

/// The scheduling.koordinator.sh/reservation-affinity annotation: the pod must use a
/// reservation, and only one that all of these accept.
struct ReservationAffinity {
  /// Only the reservation of this name (when non-empty).
  std::string name;
  /// Every pair on the reservation's labels.
  kube::Labels reservation_selector;
  /// requiredDuringSchedulingIgnoredDuringExecution.reservationSelectorTerms over the
  /// reservation's labels (terms ORed); nullopt without it.
  std::optional<kube::NodeSelector> required;
  /// Against the reservation's spec.taints.
  std::vector<kube::Toleration> tolerations;

  /// Whether reservation `r` is one this affinity accepts. A name, when set, decides alone (as
  /// in Koordinator, a named reservation skips the selector, the terms and the taints);
  /// otherwise the selector, the terms (the reservation's name is the metadata.name field) and
  /// the tolerations (every NoSchedule and NoExecute taint of spec.taints) must all pass.
  bool matches(const Reservation& r) const;
  /// As matches(r), with the selector and terms read over the labels of the reservation's node
  /// overlaid by the reservation's own (Koordinator's default: a pod may select a reservation
  /// by its node's zone without the reservation carrying that label).
  bool matches(const Reservation& r, const kube::Labels& node_labels) const;
  /// Whether the tolerations tolerate node.kubernetes.io/unschedulable:NoSchedule: Koordinator
  /// lets such a pod (and only such a pod, unless it names the reservation) use an
  /// unschedulable or terminating reservation.
  bool toleratesUnschedulable() const;
};
/// nullopt without the annotation (an empty or null value is an affinity that accepts any
/// reservation without NoSchedule/NoExecute taints, as Koordinator reads it); errors name the
/// annotation and the field. Terms are checked as Koordinator's NewNodeSelector checks them: an
/// invalid matchExpressions requirement, or a matchFields one other than In/NotIn with one
/// value, is an error (a field other than metadata.name reads as "").
kube::Expected<std::optional<ReservationAffinity>> reservationAffinity(
    const kube::Labels& annotations);

/// The pod facts an owner matcher reads.
struct OwnerMatchPod {
  std::string_view namespace_;
  std::string_view name;
  std::string_view uid;
  const kube::Labels* labels = nullptr;
  /// The pod's controller owner reference (empty kind and name without one).
  std::string_view controller_api_version;
  std::string_view controller_kind;
  std::string_view controller_name;
  std::string_view controller_uid;
};
/// Koordinator's MatchReservationOwners: some owner whose object, controller and labelSelector
/// (each when set) all match. No owners match nothing; an owner {} matches every pod. A pod's
/// apiVersion is "v1". Only the pod's controller reference is known, so a controller owner
/// matches it alone, and one asking for controller: false matches nothing.
bool matchesOwners(const std::vector<ReservationOwner>& owners, const OwnerMatchPod& pod);

/// The node.koordinator.sh/reservation annotation: what an operator keeps on a node for work
/// outside Kubernetes.
enum class NodeReservationApplyPolicy { kDefault, kReservedCPUsOnly };
struct NodeReservation {
  kube::ResourceList resources;
  /// reservedCPUs as written ("0-1"); empty when none.
  std::string reserved_cpus;
  /// reserved_cpus' CPU ids, sorted.
  std::vector<int> reserved_cpu_ids;
  NodeReservationApplyPolicy apply_policy = NodeReservationApplyPolicy::kDefault;

  /// What is kept from the node's allocatable (Koordinator's GetNodeReservationResources):
  /// resources, with cpu replaced by the count of reservedCPUs when those are set.
  kube::ResourceList reservedResources() const;
  /// Whether the scheduler trims allocatable by reservedResources(): applyPolicy "" or Default.
  bool trimsAllocatable() const { return apply_policy == NodeReservationApplyPolicy::kDefault; }
};
/// nullopt without the annotation, or with "" or "null" (no reservation, as Koordinator reads
/// them); errors name the annotation and the field: not a JSON object, a bad or negative
/// quantity, a bad CPU list (cgroup::parseCpuList's syntax), an applyPolicy other than "",
/// "Default" or "ReservedCPUsOnly".
kube::Expected<std::optional<NodeReservation>> nodeReservation(const kube::Labels& annotations);

}  // namespace koord::apis
