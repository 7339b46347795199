// The scheduler's projection of a Pod: what the default plugins, LoadAwareScheduling and the
// queue read, decoded once at the informer (errors name the field), shared read-only afterwards.
#pragma once

#include <boost/json/fwd.hpp>

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "koord/apis/extension.h"
#include "koord/apis/reservation.h"
#include "koord/kube/error.h"
#include "koord/kube/labels.h"
#include "koord/kube/scheduling_match.h"
#include "resource.h"

namespace koord::roles::scheduler {

/// A container port with a hostPort (only those matter to NodePorts); protocol defaults to TCP
/// and hostIP to 0.0.0.0, as the API server's defaulting leaves them.
struct HostPort {
  std::string host_ip = "0.0.0.0";
  std::string protocol = "TCP";
  std::int32_t port = 0;

  friend bool operator==(const HostPort&, const HostPort&) = default;
};

/// One PodAffinityTerm: pods matching label_selector in `namespaces` (empty: the pod's own
/// namespace, filled in at decode) on nodes sharing topology_key's value.
struct PodAffinityTerm {
  kube::Selector label_selector;
  std::vector<std::string> namespaces;
  std::string topology_key;
};

struct WeightedPodAffinityTerm {
  std::int32_t weight = 0;
  PodAffinityTerm term;
};

struct PodAffinityRules {
  std::vector<PodAffinityTerm> required;
  std::vector<WeightedPodAffinityTerm> preferred;
  bool empty() const { return required.empty() && preferred.empty(); }
};

enum class UnsatisfiableConstraintAction { kDoNotSchedule, kScheduleAnyway };

struct TopologySpreadConstraint {
  std::int32_t max_skew = 1;
  std::string topology_key;
  UnsatisfiableConstraintAction when_unsatisfiable = UnsatisfiableConstraintAction::kDoNotSchedule;
  kube::Selector label_selector;
};

enum class PodPhase { kPending, kRunning, kSucceeded, kFailed, kUnknown };

/// The volume sources the volume plugins tell apart (VolumeRestrictions, NodeVolumeLimits,
/// VolumeZone, VolumeBinding); every other source is kOther.
enum class VolumeSourceKind {
  kOther,
  kPersistentVolumeClaim,
  kEphemeral,  // a generic ephemeral volume: its claim is "<pod>-<volume>"
  kGCEPersistentDisk,
  kAWSElasticBlockStore,
  kAzureDisk,
  kCinder,
  kISCSI,
  kRBD,
  kCSI,  // an inline CSI volume
};

/// A member of a volume (a Pod's spec.volumes[i], a PersistentVolume's spec) that names its
/// source, with the source's member holding its identity.
struct VolumeSourceField {
  std::string_view member;
  VolumeSourceKind kind;
  std::string_view id_field;
};

/// The sources a pod's inline volume and a PersistentVolume share: the disks the volume plugins
/// tell apart, and CSI (its driver).
inline constexpr std::array<VolumeSourceField, 7> kDiskVolumeSources = {{
    {"gcePersistentDisk", VolumeSourceKind::kGCEPersistentDisk, "pdName"},
    {"awsElasticBlockStore", VolumeSourceKind::kAWSElasticBlockStore, "volumeID"},
    {"azureDisk", VolumeSourceKind::kAzureDisk, "diskName"},
    {"cinder", VolumeSourceKind::kCinder, "volumeID"},
    {"iscsi", VolumeSourceKind::kISCSI, "iqn"},
    {"rbd", VolumeSourceKind::kRBD, "image"},
    {"csi", VolumeSourceKind::kCSI, "driver"},
}};

struct PodVolume {
  std::string name;
  VolumeSourceKind kind = VolumeSourceKind::kOther;
  /// The claim's name (persistentVolumeClaim.claimName, or the ephemeral volume's claim); the
  /// disk's identity otherwise: gcePersistentDisk.pdName, awsElasticBlockStore.volumeID,
  /// azureDisk.diskName, cinder.volumeID, iscsi.iqn, rbd.image, csi.driver.
  std::string id;
  bool read_only = false;
  /// rbd only: the monitors and the pool the image is in.
  std::vector<std::string> monitors;
  std::string pool;

  bool usesClaim() const {
    return kind == VolumeSourceKind::kPersistentVolumeClaim || kind == VolumeSourceKind::kEphemeral;
  }
};

struct PodInfo {
  std::string namespace_;
  std::string name;
  std::string uid;
  std::string resource_version;
  kube::Labels labels;
  /// Only the annotations a plugin reads are kept (see kKeptPodAnnotations in pod_decode.cpp).
  kube::Labels annotations;
  std::chrono::system_clock::time_point creation_timestamp{};
  bool terminating = false;  // metadata.deletionTimestamp set
  /// The controller owner's kind ("ReplicaSet", "DaemonSet", ...) and name; empty without one.
  std::string controller_kind;
  std::string controller_name;
  std::string controller_uid;
  std::string controller_api_version;

  std::string scheduler_name = "default-scheduler";
  std::string node_name;            // spec.nodeName
  std::string nominated_node_name;  // status.nominatedNodeName
  std::int32_t priority = 0;        // spec.priority (0 when unset, as the API defaults it)
  /// The koordinator.sh/priority label (Koordinator's sub-priority, which orders pods of one
  /// priority in its queue); 0 when absent or not an int32.
  std::int32_t sub_priority = 0;
  bool preempt_never = false;  // spec.preemptionPolicy == Never
  PodPhase phase = PodPhase::kPending;
  /// status.startTime (the kubelet's acknowledgement); preemption prefers victims started last.
  std::optional<std::chrono::system_clock::time_point> start_time;
  /// lastTransitionTime of the PodScheduled and Initialized conditions while they are True
  /// (LoadAware counts an assigned pod's estimate from them).
  std::optional<std::chrono::system_clock::time_point> scheduled_at;
  std::optional<std::chrono::system_clock::time_point> initialized_at;

  /// The effective request (containers summed, each init container as a floor, overhead added)
  /// and the same with kube-scheduler's non-zero defaults for CPU and memory per container.
  Resource requests;
  Resource non_zero_requests;
  /// Containers' limits summed the same way (LoadAware's estimator reads max(limit, request)).
  Resource limits;

  std::vector<HostPort> host_ports;
  kube::Labels node_selector;
  std::optional<kube::NodeAffinity> node_affinity;
  PodAffinityRules pod_affinity;
  PodAffinityRules pod_anti_affinity;
  std::vector<kube::Toleration> tolerations;
  std::vector<TopologySpreadConstraint> topology_spread_constraints;
  /// spec.schedulingGates' names: while any is left the pod waits outside the active queue.
  std::vector<std::string> scheduling_gates;
  /// How many spec.resourceClaims the pod has (DynamicResources).
  std::size_t resource_claims = 0;
  /// spec.volumes, in order (at most kMaxPodVolumes).
  std::vector<PodVolume> volumes;
  /// spec.containers[*].image, in order (ImageLocality; init containers are not counted, as
  /// 1.20 counts them).
  std::vector<std::string> container_images;

  /// koordinator.sh/qosClass label, else from the Kubernetes QoS class.
  apis::QoSClass qos = apis::QoSClass::kNone;
  /// koordinator.sh/priority-class label, else spec.priority's band.
  apis::PriorityClass priority_class = apis::PriorityClass::kNone;

  /// A Reservation's stand-in in the queue and the cache (built from its template, named and
  /// UID'd as the Reservation, no namespace): scheduling it places the Reservation.
  bool reserve_pod = false;
  /// scheduling.koordinator.sh/reservation-allocated: the reservation whose room this pod
  /// takes on its node (set by the scheduler as it binds the pod); empty when none or when the
  /// annotation is malformed (the pod then counts as any other).
  std::string reservation_name;
  std::string reservation_uid;
  /// scheduling.koordinator.sh/reservation-affinity: the pod must use a reservation it accepts.
  std::optional<apis::ReservationAffinity> reservation_affinity;
  /// Why the reservation-affinity annotation could not be read (the pod is then unschedulable
  /// with this reason); empty when it could.
  std::string reservation_affinity_error;
  /// scheduling.koordinator.sh/reservation-ignored=true: never placed into a reservation.
  bool reservation_ignored = false;

  /// The gang the pod is in ("namespace/name", see apis::podGangId); empty when none.
  std::string gang_id;
  /// Why the pod's gang could not be read (Coscheduling refuses it with this); empty when it
  /// could.
  std::string gang_error;

  /// namespace/name; "@reservation/<name>" for a reserve pod (no namespace starts with '@', so
  /// it never meets a real pod's key in the queue).
  std::string key() const { return reserve_pod ? "@reservation/" + name : namespace_ + "/" + name; }
  bool isDaemonSetPod() const { return controller_kind == "DaemonSet"; }
  bool assigned() const { return !node_name.empty(); }
  /// Succeeded or Failed: its resources are free again.
  bool finished() const { return phase == PodPhase::kSucceeded || phase == PodPhase::kFailed; }
};

/// Bounds what one pod may declare: the API server accepts any number of volumes, so a
/// hostile object could make every volume plugin's walk as long as it likes.
inline constexpr std::size_t kMaxPodVolumes = 1024;
/// The same for spec.schedulingGates (the queue compares them on every pod update) and
/// spec.containers (ImageLocality walks their images on every node it scores).
inline constexpr std::size_t kMaxSchedulingGates = 1024;
inline constexpr std::size_t kMaxPodContainers = 1024;

/// Projects a Pod; errors name the field ("spec.containers[1].resources.requests[cpu]: ...").
kube::Expected<PodInfo> decodePodInfo(const boost::json::value& v);

/// Re-reads the fields derived from the reservation annotations after a plugin changed
/// `pod.annotations` (the assumed copy of a pod a Reserve plugin placed into a reservation).
void refreshReservationAnnotations(PodInfo& pod);

}  // namespace koord::roles::scheduler
